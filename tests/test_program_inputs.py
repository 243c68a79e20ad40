"""A fix by hand to what a failing command's programs read lifts its ban (real tools).

``make test`` reads ``calc.c`` through its Makefile's rules, ``javac *.java`` the files its
glob expands to, ``cargo test`` the crate, ``bash check.sh`` what the script sources,
``test -d build`` the path it tests, ``grep -r TODO src`` the files under ``src``. None of
them is named by the command or its error, so a fix there, made by a person or by a tool the
memory does not guard, left the call refused although it would now succeed. Each case runs
the real command before and after the repair, and checks that a change which cannot help
does not lift the ban.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.engine import memory_in
from scarguard import ToolBlocked, guarded_tool
from scarguard.learning._imports import code_imports, inline_code
from scarguard.learning._inputs import program_inputs
from scarguard.learning._prerequisites import prerequisites
from scarguard.observe import LocalObserver
from test_repairs_outside import _tree as _workspace
from test_repairs_outside import banned, sh

C_TEST = (
    "printf 'int add(int a, int b) { return a - b; }\\n' > calc.c && "
    "printf '#include <assert.h>\\nint add(int, int);\\n"
    "int main(void) { assert(add(2, 2) == 4); return 0; }\\n' > test.c && "
    "printf 'test: calc_test\\n\\t./calc_test\\ncalc_test: calc.c test.c\\n"
    "\\tcc -o calc_test calc.c test.c\\n' > Makefile && echo notes > README.md"
)
C_LINK = (
    "printf 'int sub(int a, int b) { return a - b; }\\n' > calc.c && "
    "printf 'int add(int, int);\\nint main(void) { return add(1, 1) - 2; }\\n' > main.c && "
    "printf 'app: main.o calc.o\\n\\tcc -o app main.o calc.o\\n"
    "main.o: main.c\\ncalc.o: calc.c\\n' > Makefile && echo notes > README.md"
)
JAVA = (
    "printf 'class Calc { static int add(int a, int b) { return a - b; } }\\n' > Calc.java && "
    "printf 'class CalcTest { public static void main(String[] a) {"
    ' if (Calc.add(2, 2) != 4) throw new AssertionError("add"); } }\\n\' > CalcTest.java'
    " && echo notes > README.md"
)
CMAKE_PROJECT = (
    "mkdir src && printf 'cmake_minimum_required(VERSION 3.10)\\nproject(p C)\\n"
    "add_executable(app src/main.c src/util.c)\\n' > CMakeLists.txt && printf 'int add(int,"
    " int);\\nint main(void) { return add(1, 1) - 2; }\\n' > src/main.c && printf 'int sub(int"
    " a, int b) { return a - b; }\\n' > src/util.c && echo notes > README.md"
)
C_RULE = "calc_test: calc.c test.c\\n\\tcc -o calc_test calc.c test.c"
C_VARIABLES = C_TEST.replace(
    "test: calc_test", "SRCS = calc.c test.c\\nOBJS = $(SRCS:.c=.o)\\ntest: calc_test"
).replace(C_RULE, "calc_test: $(OBJS)\\n\\t$(CC) -o $@ $^")
C_WILDCARD = C_VARIABLES.replace("SRCS = calc.c test.c", "SRCS := $(wildcard *.c)")
C_BUILT_IN = C_TEST.replace(C_RULE, "calc_test: calc.o test.o\\n\\tcc -o $@ $^")
CASES = [
    # (needs, the world, the failing command, the repair by hand)
    ("make", C_TEST, "make test", "sed -i 's/a - b/a + b/' calc.c"),
    ("make", C_TEST, "make", "sed -i 's/a - b/a + b/' calc.c"),  # the default goal
    ("make", C_VARIABLES, "make test", "sed -i 's/a - b/a + b/' calc.c"),
    ("make", C_WILDCARD, "make test", "sed -i 's/a - b/a + b/' calc.c"),
    ("make", C_BUILT_IN, "make test", "sed -i 's/a - b/a + b/' calc.c"),
    ("make", C_LINK, "make app", "echo 'int add(int a, int b) { return a + b; }' >> calc.c"),
    (
        "javac",
        JAVA,
        "javac -d out *.java && java -ea -cp out CalcTest",
        "sed -i 's/a - b/a + b/' Calc.java",
    ),
    (
        "bash",
        "printf 'ok() { return 1; }\\n' > lib.sh && printf '. ./lib.sh\\nok\\n' > check.sh"
        " && echo notes > README.md",
        "bash check.sh",
        "printf 'ok() { return 0; }\\n' > lib.sh",
    ),
    (
        "bash",
        "printf '#!/bin/sh\\n./step.sh  # the step\\n' > run.sh && printf '#!/bin/sh\\nexit 1\\n'"
        " > step.sh && chmod +x run.sh step.sh && echo notes > README.md",
        "./run.sh",
        "printf '#!/bin/sh\\nexit 0\\n' > step.sh",
    ),
    (
        "python3",
        "mkdir inbox && printf 'import os\\nassert os.listdir(\"inbox\"), \"empty\"\\n' > check.py"
        " && echo notes > README.md",
        "python3 check.py",
        "touch inbox/mail",
    ),
    (
        "npm",
        "printf '{\"name\": \"a\", \"scripts\": {\"test\": \"node test.js\"}}' > package.json"
        " && printf 'const { add } = require(\"./lib/calc\");\\nif (add(1, 2) !== 3)"
        " process.exit(1);\\n' > test.js && mkdir lib && printf 'exports.add = (a, b) => a - b;"
        "\\n' > lib/calc.js && echo notes > README.md",
        "npm test",
        "sed -i 's/a - b/a + b/' lib/calc.js",
    ),
    # what a goal's recipe runs: a file it tests, a script, a script's interpreter, a sub-make
    (
        "make",
        "printf 'test:\\n\\t@test -f out/ok\\n' > Makefile && echo notes > README.md",
        "make test",
        "mkdir out && touch out/ok",
    ),
    (
        "make",
        "printf 'check:\\n\\t@./run-checks.sh\\n' > Makefile && printf '#!/bin/sh\\nexit 1\\n'"
        " > run-checks.sh && chmod +x run-checks.sh && echo notes > README.md",
        "make check",
        "printf '#!/bin/sh\\nexit 0\\n' > run-checks.sh",
    ),
    (
        "make",
        "printf 'PY = python3\\ntest: ; $(PY) check.py\\n' > Makefile"
        " && printf 'import sys\\nsys.exit(1)\\n' > check.py && echo notes > README.md",
        "make test",
        "printf 'import sys\\nsys.exit(0)\\n' > check.py",
    ),
    (
        "make",
        "mkdir sub && printf 'all:\\n\\t$(MAKE) -C sub test\\n' > Makefile"
        " && printf 'test:\\n\\t@test -f ok\\n' > sub/Makefile && echo notes > README.md",
        "make",
        "touch sub/ok",
    ),
    (
        "make",
        "mkdir sub && printf 'test:\\n\\t@test -f ok\\n' > sub/Makefile && echo notes > README.md",
        "(cd sub && make test)",
        "touch sub/ok",
    ),
    # a CMake build: the sources its CMakeLists.txt names, through the build folder's cache
    (
        "cmake",
        f"{CMAKE_PROJECT} && cmake -S . -B build > /dev/null",
        "cmake --build build",
        "printf 'int add(int a, int b) { return a + b; }\\n' > src/util.c",
    ),
    (
        "cmake",
        f"{CMAKE_PROJECT} && cmake -S . -B build > /dev/null",
        "cd build && make",
        "printf 'int add(int a, int b) { return a + b; }\\n' > src/util.c",
    ),
    (
        "javac",
        f"{JAVA} && mkdir out && javac -d out Calc.java CalcTest.java",
        "java -ea -cp out CalcTest",
        "sed -i 's/a - b/a + b/' Calc.java && javac -d out Calc.java",
    ),
    (
        "python3",
        "mkdir -p tests/data && echo 2 > tests/data/input.txt && printf 'from pathlib import"
        " Path\\ndef test_data():\\n    text = (Path(__file__).parent / \"data\" /"
        " \"input.txt\").read_text()\\n    assert text.strip() == \"3\"\\n'"
        " > tests/test_data.py && echo notes > README.md",
        "python3 -m pytest -q -p no:cacheprovider tests/test_data.py",
        "echo 3 > tests/data/input.txt",  # (the same size: its content decides)
    ),
    ("bash", "echo notes > README.md", "test -d build", "mkdir build"),
    ("bash", "echo notes > README.md", "[ -f out/report ]", "mkdir out && touch out/report"),
    (
        "grep",
        "mkdir src && echo 'x = 1' > src/a.py && echo notes > README.md",
        "grep -rn TODO src",
        "echo '# TODO' >> src/a.py",
    ),
    (
        "grep",
        "mkdir src && echo 'x = 1' > src/a.py && echo notes > README.md",
        "grep -rn TODO src",
        "echo '# TODO' > src/b.py",  # a new file under the folder searched
    ),
]


@pytest.mark.parametrize(("needs", "world", "command", "repair"), CASES)
def test_a_fix_by_hand_to_what_the_program_reads_lifts_the_ban(
    tmp_path: Path, needs: str, world: str, command: str, repair: str
) -> None:
    """The file the program reads through its own knowledge is watched, nothing else."""
    if shutil.which(needs) is None:
        pytest.skip(f"needs {needs}")
    assert sh(tmp_path, world).returncode == 0
    memory = memory_in(tmp_path)
    args = banned(memory, tmp_path, command)
    sh(tmp_path, "echo more notes >> README.md")  # a change the program does not read
    assert not memory.check("bash", args).allowed
    assert sh(tmp_path, repair).returncode == 0
    assert memory.check("bash", args).allowed
    assert sh(tmp_path, command).returncode == 0


@pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo")
def test_a_fix_by_hand_to_the_crate_lifts_cargo_test(tmp_path: Path) -> None:
    """``cargo test`` reads its crate: a fix to ``src/lib.rs`` (same size) lifts the ban."""
    world = (
        "cargo init -q --lib --name calc --vcs none . && printf 'pub fn add(a: i32, b: i32)"
        " -> i32 { a - b }\\n#[cfg(test)]\\nmod t { #[test] fn a() { assert_eq!(super::add(2,"
        " 2), 4); } }\\n' > src/lib.rs && echo notes > README.md"
    )
    assert sh(tmp_path, world).returncode == 0
    memory = memory_in(tmp_path)
    command = "cargo test -q --offline"
    args = banned(memory, tmp_path, command)
    sh(tmp_path, "echo more notes >> README.md")
    assert not memory.check("bash", args).allowed
    assert sh(tmp_path, "sed -i 's/a - b/a + b/' src/lib.rs").returncode == 0
    assert memory.check("bash", args).allowed
    assert sh(tmp_path, command).returncode == 0


PKG = {
    "pkg/__init__.py": "",
    "pkg/calc.py": "from .consts import STEP\ndef add(a, b):\n    return a - b * STEP\n",
    "pkg/consts.py": "STEP = 1\n",
    "README.md": "notes\n",
}


def test_a_code_tool_s_failure_is_lifted_by_a_fix_to_the_module_its_code_imports(
    tmp_path: Path,
) -> None:
    """``execute_python(code=...)`` (a code interpreter tool, run for real) fails on the
    workspace's ``pkg.calc``; a fix by hand there lifts it, a README change does not."""
    _workspace(tmp_path, PKG)
    memory = memory_in(tmp_path)

    @guarded_tool(memory)
    def execute_python(code: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True
        )
        if done.returncode:
            raise RuntimeError(done.stderr[-2000:])
        return done.stdout

    code = "import json; from pkg.calc import add\nassert add(1, 2) == 3, add(1, 2)"
    for _ in range(2):
        memory.clock.advance(5)  # type: ignore[attr-defined]
        with pytest.raises(RuntimeError, match="AssertionError"):
            execute_python(code)
    with pytest.raises(ToolBlocked):
        execute_python(code)
    (tmp_path / "README.md").write_text("more notes\n")
    assert not memory.check("execute_python", {"code": code}).allowed
    (tmp_path / "pkg" / "consts.py").write_text("STEP = -1\n")  # two imports away
    assert memory.check("execute_python", {"code": code}).allowed
    assert execute_python(code) == ""


def test_python_c_s_failure_is_lifted_by_a_fix_to_the_module_it_imports(tmp_path: Path) -> None:
    _workspace(tmp_path, PKG)
    memory = memory_in(tmp_path)
    command = "python3 -c 'from pkg.calc import add; assert add(1, 2) == 3'"
    args = banned(memory, tmp_path, command)
    sh(tmp_path, "echo more >> README.md")
    assert not memory.check("bash", args).allowed
    (tmp_path / "pkg" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    assert memory.check("bash", args).allowed
    assert sh(tmp_path, command).returncode == 0


@pytest.mark.parametrize(
    ("needs", "command"),
    [
        ("python3", "python3 - <<'EOF'\nfrom pkg.calc import add\nassert add(1, 2) == 3\nEOF"),
        ("python3", "echo 'from pkg.calc import add; assert add(1, 2) == 3' | python3"),
        ("python3", 'python3 <<< "from pkg.calc import add; assert add(1, 2) == 3"'),
        ("node", "node -e \"process.exit(require('./lib/calc.js').add(1, 2) === 3 ? 0 : 1)\""),
    ],
)
def test_code_given_to_an_interpreter_inline_is_followed_to_what_it_imports(
    tmp_path: Path, needs: str, command: str
) -> None:
    """A heredoc, a pipe, a here-string, ``node -e``: the module the code imports, fixed by
    hand, lifts."""
    if shutil.which(needs) is None:
        pytest.skip(f"needs {needs}")
    _workspace(tmp_path, {**PKG, "lib/calc.js": "exports.add = (a, b) => a - b;\n"})
    memory = memory_in(tmp_path)
    args = banned(memory, tmp_path, command)
    sh(tmp_path, "echo more >> README.md")
    assert not memory.check("bash", args).allowed
    sh(tmp_path, "sed -i 's/a - b \\* STEP/a + b/; s/a - b/a + b/' pkg/calc.py lib/calc.js")
    assert memory.check("bash", args).allowed
    assert sh(tmp_path, command).returncode == 0


def test_the_python_a_call_runs_inline_and_what_it_imports(tmp_path: Path) -> None:
    _workspace(tmp_path, {**PKG, "app/pkg/__init__.py": "", "app/pkg/calc.py": ""})
    assert inline_code({"code": "import os"}) == "import os"
    assert inline_code({"code": "print(1)"}) is None  # imports nothing
    assert inline_code({"command": "python3 -c 'import pkg' && ls"}) == "import pkg"
    assert inline_code({"command": "sudo python3.12 -u -c \"import pkg\""}) == "import pkg"
    assert inline_code({"command": "python3 app.py -c import"}) is None  # a script's -c
    assert inline_code({"command": "node -e \"require('./x')\""}) == "require('./x')"
    assert inline_code({"command": "echo 'import a' | python3 -"}) == "import a"
    assert inline_code({"command": "echo 'import a' | python3 tool.py"}) is None  # its script
    assert inline_code({"command": "python3 <<EOF\nimport a\nEOF\nls"}) == "import a"
    assert inline_code({"command": "cat <<EOF > x.py\nimport a\nEOF"}) is None  # not run
    assert inline_code({"command": 'python3 <<< "import a; print(\\"b\\")"'}) == (
        'import a; print("b")'
    )
    assert inline_code({"command": "cd app && python3 - <<<'import a' | tail"}) == "import a"
    assert inline_code({"command": 'cat <<< "import a"'}) is None  # no interpreter reads it
    observer = LocalObserver(tmp_path)
    found = code_imports("import os, json; from pkg.calc import add", observer.read, observer.names)
    assert found == ("pkg/calc.py", "pkg/consts.py")
    assert code_imports("import pkg.calc", observer.read, observer.names, "app") == (
        "app/pkg/calc.py",
    )  # (run in app/: its pkg first)
    assert code_imports("import requests", observer.read, observer.names) == ()


def inputs(root: Path, command: str) -> tuple[str, ...]:
    observer = LocalObserver(root)
    return program_inputs({"command": command}, observer.read, observer.names)


def test_make_reads_the_prerequisites_its_goals_reach(tmp_path: Path) -> None:
    """Through the rules, in the -C directory, with -f files; not rules the goal never reaches."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "Makefile").write_text(
        "all: app\napp: main.o util.o\n\tcc -o app main.o util.o\nmain.o: main.c main.h\n"
        "util.o: util.c\ndocs: guide.md\nclean:\n\trm -f app *.o\n"
    )
    (tmp_path / "sub" / "build.mk").write_text("lib: lib.c $(EXTRA)\n")
    assert set(inputs(tmp_path, "make app")) == {"main.o", "util.o", "main.c", "main.h", "util.c"}
    assert "guide.md" not in inputs(tmp_path, "make")  # the default goal, all, reaches no docs
    assert "main.c" in inputs(tmp_path, "make")
    assert inputs(tmp_path, "make -j 4 docs") == ("guide.md",)
    assert inputs(tmp_path, "make -C sub -f build.mk lib") == ("sub/lib.c",)
    assert inputs(tmp_path, "cd sub && make -f build.mk") == ("sub/lib.c",)
    assert inputs(tmp_path, "make -C missing") == ()


def test_make_reads_what_its_goals_recipes_name_and_run(tmp_path: Path) -> None:
    """A recipe is read as a command run in the make directory, its automatic variables set."""
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "lib.sh").write_text("")
    (tmp_path / "tools" / "gen.sh").write_text(". tools/lib.sh\n")
    (tmp_path / "Makefile").write_text(
        "CHECK = ./tools/gen.sh\nout.txt: in.csv\n\t@$(CHECK) $< > $@\n"
        "test: out.txt ; -test -s $(@D)/expected.txt\n"
        "clean:\n\trm -f out.txt\n"
        "deep:\n\t+$(MAKE) -C sub\n"
    )
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "Makefile").write_text("all:\n\t$(MAKE) -C inner\n\ttest -f made\n")
    (tmp_path / "sub" / "inner").mkdir()
    (tmp_path / "sub" / "inner" / "Makefile").write_text("all:\n\ttest -f deepest\n")
    found = inputs(tmp_path, "make test")
    assert found[:2] == ("out.txt", "in.csv")  # the prerequisites first
    assert {"expected.txt", "tools/gen.sh", "tools/lib.sh"} <= set(found)
    assert "stale.log" not in found  # a rule the goal never reaches: not its recipe
    deep = inputs(tmp_path, "make deep")
    assert "sub/made" in deep  # the recipe of $(MAKE) -C sub's default goal
    assert "sub/inner/deepest" not in deep  # recipes two makes down: not followed


def test_cmake_reads_the_files_its_lists_name(tmp_path: Path) -> None:
    """Sources, globs and subdirectories of the project; the build folder's cache finds it."""
    (tmp_path / "src").mkdir()
    (tmp_path / "lib").mkdir()
    for name in ("src/main.c", "src/util.c", "src/util.h", "lib/a.cpp", "lib/b.cpp"):
        (tmp_path / name).write_text("")
    (tmp_path / "CMakeLists.txt").write_text(
        "project(p C CXX)  # src/ignored.c\nadd_executable(app src/main.c \"src/util.c\")\n"
        "target_include_directories(app PRIVATE ${CMAKE_SOURCE_DIR}/include)\n"
        "add_subdirectory(lib)\nset(MISSING src/gone.c)\n"
    )
    (tmp_path / "lib" / "CMakeLists.txt").write_text(
        "file(GLOB LIB *.cpp)\nadd_library(l ${LIB})\n"
    )
    expected = [
        "CMakeLists.txt", "src/main.c", "src/util.c", "lib/CMakeLists.txt", "lib", "lib/a.cpp",
        "lib/b.cpp",
    ]  # fmt: skip
    assert list(inputs(tmp_path, "cmake -S . -B build")) == expected
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "CMakeCache.txt").write_text(
        f"# This is the CMakeCache file.\nCMAKE_HOME_DIRECTORY:INTERNAL={tmp_path}\n"
    )
    assert inputs(tmp_path, "cmake --build out --target app") == tuple(
        str(tmp_path / p) for p in expected
    )  # (the cache gives the source folder absolute)
    (tmp_path / "out" / "Makefile").write_text("# CMAKE generated file: DO NOT EDIT!\nall:\n")
    assert len(inputs(tmp_path, "make -C out")) == len(expected)
    assert inputs(tmp_path, "ctest --test-dir out")[:1] == (str(tmp_path / "CMakeLists.txt"),)
    assert list(inputs(tmp_path, "cd out && cmake ..")) == expected
    assert inputs(tmp_path, "cmake --version") == ()
    assert inputs(tmp_path, "cmake -E echo src/main.c") == ()


def test_java_loads_the_classes_of_its_class_path(tmp_path: Path) -> None:
    (tmp_path / "out" / "app").mkdir(parents=True)
    for name in ("out/app/Main.class", "out/app/Calc.class", "out/app/notes.txt", "Top.class"):
        (tmp_path / name).write_text("")
    assert inputs(tmp_path, "java -ea -cp out app.Main arg") == (
        "out/app/Calc.class", "out/app/Main.class",
    )  # fmt: skip
    assert inputs(tmp_path, "java --class-path=out:lib.jar app.Main")[0] == "out/app/Calc.class"
    assert inputs(tmp_path, "java Top") == ("Top.class",)
    assert inputs(tmp_path, "java -jar app.jar") == ()  # the command names the jar
    assert inputs(tmp_path, "java Main.java") == ()  # a source launch names its file


def test_a_glob_gives_its_folder_and_the_files_it_matches(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    for name in ("a.c", "b.c", "b.h", ".hidden.c"):
        (tmp_path / "src" / name).write_text("")
    assert inputs(tmp_path, "cc -o app src/*.c") == ("src", "src/a.c", "src/b.c")
    assert inputs(tmp_path, "cd src && cc *.[ch]") == ("src", "src/a.c", "src/b.c", "src/b.h")
    assert inputs(tmp_path, "cc $SRC/*.c") == ()  # a variable: not followed
    assert inputs(tmp_path, "cc */*.c") == ()  # a glob in a folder's name: not followed


def test_go_reads_the_files_of_the_packages_it_names(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("module m\n")
    (tmp_path / "main.go").write_text("package main\n")
    (tmp_path / "calc").mkdir()
    (tmp_path / "calc" / "calc.go").write_text("package calc\n")
    (tmp_path / "calc" / "README").write_text("")
    assert inputs(tmp_path, "go test ./...") == ("main.go", "calc/calc.go")
    assert inputs(tmp_path, "go build") == ("main.go",)
    assert inputs(tmp_path, "go test ./calc") == ("calc/calc.go",)
    assert inputs(tmp_path, "go version") == ()


def test_a_script_s_named_files_two_levels_deep(tmp_path: Path) -> None:
    """A shell script's file-like words, and those of the shell scripts it names."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "run.sh").write_text('#!/bin/sh\n. ./lib/env.sh\nsource "$HOME/x"\nmain\n')
    (tmp_path / "lib" / "env.sh").write_text("  source lib/more.sh  # and more\n")
    assert inputs(tmp_path, "bash run.sh") == ("lib/env.sh", "lib/more.sh")
    assert inputs(tmp_path, "./run.sh") == ("lib/env.sh", "lib/more.sh")
    assert inputs(tmp_path, "source run.sh") == ("lib/env.sh", "lib/more.sh")
    assert inputs(tmp_path, "cat run.sh") == ()  # read, not run
    (tmp_path / "app.py").write_text(
        "import os, sys\nCONFIG = 'conf/app.toml'\nos.listdir('lib')\nprint('hello', \"x\")\n"
        "open(f'{sys.argv[1]}.csv')\nopen('../secret.txt')\n"
    )
    assert inputs(tmp_path, "python3.12 app.py") == ("conf/app.toml", "lib")
    # run from lib: conf/ as from there; lib as a name of the script's own folder
    assert inputs(tmp_path, "cd lib && python3 ../app.py") == ("lib/conf/app.toml", "lib")
    (tmp_path / "tests" / "data").mkdir(parents=True)
    (tmp_path / "tests" / "data" / "input.txt").write_text("2")
    (tmp_path / "tests" / "test_data.py").write_text(
        "from pathlib import Path\nHERE = Path(__file__).parent\n"
        "def test_data():\n    assert (HERE / 'data' / 'input.txt').read_text() == '3'\n"
    )
    # (input.txt is file-like: also watched where the command runs, as a relative open would)
    assert inputs(tmp_path, "python3 -m pytest tests/test_data.py") == (
        "tests/data", "input.txt", "tests/data/input.txt",
    )  # fmt: skip


def test_a_package_script_is_read_as_the_command_it_runs(tmp_path: Path) -> None:
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "package.json").write_text(
        '{"scripts": {"test": "node tests/run.js", "build": "make -C native", "lint": "eslint"}}'
    )
    (tmp_path / "web" / "native").mkdir()
    (tmp_path / "web" / "native" / "Makefile").write_text("all: lib.c\n")
    assert inputs(tmp_path, "npm --prefix web test") == ("web/tests/run.js",)
    assert inputs(tmp_path, "cd web && npm run build") == ("web/native/lib.c",)
    assert inputs(tmp_path, "cd web && yarn build") == ("web/native/lib.c",)
    assert inputs(tmp_path, "cd web && npm install") == ()
    assert inputs(tmp_path, "cd web && pnpm run missing") == ()
    (tmp_path / "web" / "package.json").write_text("{not json")
    assert inputs(tmp_path, "cd web && npm test") == ()


def test_tests_and_searches(tmp_path: Path) -> None:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "a.py").write_text("")
    (tmp_path / "src" / "pkg" / "b.py").write_text("")
    assert inputs(tmp_path, "if [ -d build ]; then echo yes; fi") == ("build",)
    assert inputs(tmp_path, "test -n x") == ()  # not a test of a file
    assert inputs(tmp_path, "grep -rn TODO src") == ("src", "src/a.py", "src/pkg", "src/pkg/b.py")
    assert inputs(tmp_path, "rg -e TODO src/pkg") == ("src/pkg", "src/pkg/b.py")
    assert inputs(tmp_path, "grep TODO src/a.py") == ()  # not recursive: the command names it


def test_a_makefile_is_read_with_its_variables_patterns_and_built_in_rules(
    tmp_path: Path,
) -> None:
    """What make would make the goal from, as far as a reader of the text can tell."""
    for name in ("main.c", "util.c", "extra.c", "notes.txt", "gen.y"):
        (tmp_path / name).write_text("")
    text = (
        ".PHONY: all clean\n"
        "include config.mk\n-include $(DEPS)\nDEPS = deps.mk\n"
        "SRCS := $(wildcard *.c)\nOBJS = $(SRCS:.c=.o) gen.o\nOBJS += $(EXTRA)\n"
        "EXTRA ?= lib/x.o\nCFLAGS = $(shell pkg-config --cflags x)\n"
        "all: app  # the default goal\n"
        "app: $(OBJS) | out\n\t$(CC) -o $@ $^\n"
        "lib/%.o: lib/%.cpp \\\n  lib/common.h\n"
        "docs: guide.md\n"
    )
    found, included, _ = prerequisites(text, [], LocalObserver(tmp_path).names)
    assert found == [
        "app", "extra.o", "main.o", "util.o", "gen.o", "lib/x.o", "out",
        "extra.c", "main.c", "util.c", "gen.y", "lib/x.cpp", "lib/common.h",
    ]  # fmt: skip
    assert included == ["config.mk"]  # ($(DEPS) is set after the include: empty there)
    assert prerequisites(text, ["docs"], LocalObserver(tmp_path).names)[0] == ["guide.md"]
    assert prerequisites("x = $(y\n", ["a"], LocalObserver(tmp_path).names) == ([], [], [])


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        # none named: the root's test files, and its tests folder as if named
        ("pytest -q", ("test_top.py", "tests", "tests/test_a.py", "tests/unit/test_b.py")),
        ("python3 -m pytest tests/unit", ("tests/unit", "tests/unit/test_b.py")),
        # -k's value is an expression, not a folder; a file named is the command's own
        ("pytest -k tests tests/unit/test_b.py::test_x", ()),
        ("cd tests && pytest .", ("tests", "tests/test_a.py", "tests/unit/test_b.py")),
    ],
)
def test_the_test_files_pytest_collects(
    tmp_path: Path, command: str, expected: tuple[str, ...]
) -> None:
    """What a pytest run collects without naming it, from the folders it is given."""
    for name in ("test_top.py", "tests/test_a.py", "tests/helpers.py", "tests/unit/test_b.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    observer = LocalObserver(tmp_path)
    found = program_inputs({"command": command}, observer.read, observer.names)
    assert tuple(p for p in found if p != "tests/__pycache__") == expected


def test_a_bare_pytest_without_a_tests_folder_watches_its_own(tmp_path: Path) -> None:
    """No tests folder and no test file: the folder pytest runs in (a test made there lifts)."""
    observer = LocalObserver(tmp_path)
    assert program_inputs({"command": "pytest"}, observer.read, observer.names) == (".",)


@pytest.mark.parametrize(
    "command",
    [
        "timeout 60 pytest",
        "timeout -s KILL 5m python -m pytest",
        "env PYTHONPATH=src pytest",
        "nice -n 5 pytest",
        "uv run pytest",
        "uv run --with pytest-xdist pytest",
        "poetry run python -m pytest",
        "coverage run -m pytest",
        "python3 -m coverage run --rcfile .coveragerc -m pytest",
        "timeout 600 uv run pytest",
    ],
)
def test_a_launched_program_reads_what_it_reads_alone(tmp_path: Path, command: str) -> None:
    """``timeout``, ``env``, ``nice``, ``uv run``, ``coverage run``...: the program they
    launch is followed as if run alone."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("")
    observer = LocalObserver(tmp_path)
    alone = program_inputs({"command": "pytest"}, observer.read, observer.names)
    assert alone == ("tests", "tests/test_a.py")
    assert program_inputs({"command": command}, observer.read, observer.names) == alone


@pytest.mark.parametrize(
    ("config", "text"),
    [
        ("pyproject.toml", '[tool.pytest.ini_options]\ntestpaths = [\n  "checks",\n]\n'),
        ("pytest.ini", "[pytest]\naddopts = -q\ntestpaths = checks\n    more\n"),
        ("setup.cfg", "[tool:pytest]\ntestpaths=checks\n"),
    ],
)
def test_a_bare_pytest_collects_from_its_configured_testpaths(
    tmp_path: Path, config: str, text: str
) -> None:
    """``testpaths`` in pytest's configuration are the folders a bare run collects from."""
    (tmp_path / config).write_text(text)
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "test_a.py").write_text("")
    (tmp_path / "test_top.py").write_text("")  # not collected: testpaths say where
    observer = LocalObserver(tmp_path)
    found = program_inputs({"command": "python -m pytest -q"}, observer.read, observer.names)
    assert found == ("checks", "checks/test_a.py")


def test_a_launched_package_script_is_followed(tmp_path: Path) -> None:
    """``timeout 60 npm test`` follows the package script as ``npm test`` does."""
    (tmp_path / "package.json").write_text('{"scripts": {"test": "node check.js"}}')
    (tmp_path / "check.js").write_text("require('./lib/calc.js')\n")
    observer = LocalObserver(tmp_path)
    alone = program_inputs({"command": "npm test"}, observer.read, observer.names)
    assert "check.js" in alone
    launched = program_inputs({"command": "timeout 60 npm test"}, observer.read, observer.names)
    assert launched == alone
