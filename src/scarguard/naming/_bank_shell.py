"""The default bank's signatures of the workspace: files, processes, commands, git, packages.

Paths outside the workspace, missing or too large files, permissions and conflicts, ports,
disks, killed and crashed processes, programs that are not installed, make targets, git's
refusals, packages that do not exist, and plain non-zero exits. Data of
:mod:`scarguard.naming.bank`, which orders every signature of the default bank (first match
wins); each comment says whose choice would have to change for the call to succeed.
"""

from __future__ import annotations

from scarguard.model import Blame
from scarguard.naming._bank_services import CODE
from scarguard.naming._signature import Signature

__all__ = [
    "COMMAND_FAILED",
    "COMMAND_NOT_FOUND",
    "CONFLICT",
    "DISK_FULL",
    "FILE_NOT_FOUND",
    "FILE_TOO_LARGE",
    "GIT_PUSH_REJECTED",
    "LOCK_HELD",
    "MAKE_TARGET_MISSING",
    "NOTHING_TO_COMMIT",
    "PACKAGE_NOT_FOUND",
    "PATH_TRAVERSAL",
    "PERMISSION_DENIED",
    "PORT_IN_USE",
    "PROCESS_KILLED",
    "SEGFAULT",
]

_EXIT = r"\b[Ee]xit(?:ed)?(?: with)? (?:code|status):? "
"""An exit code or status about to be named (``exit code``, ``exited with status:``)."""

A, H, U = Blame.AGENT, Blame.HARNESS, Blame.UNKNOWN

# Agent: it chose a path outside its sandbox; the identical path is refused again.
PATH_TRAVERSAL = Signature(
    "path_traversal",
    r"(?i:\bpath traversal\b)|\boutside (?:of )?(?:the )?(?:workspace|allowed "
    r"director(?:y|ies)|allowed paths?|sandbox|project (?:root|directory)|working directory)\b",
    A,
    "Use a path inside the workspace, relative to its root, without '..' segments.",
    "path outside the workspace",
    deterministic=True,
)

# Agent: it chose a port that one of its own earlier servers (usually) still holds. Not
# deterministic: the fix (stopping the old server) often happens outside the guarded
# tools; a guarded `kill` also makes the failure stale (a shell command that changes
# processes is a change of the world).
PORT_IN_USE = Signature(
    "port_in_use",
    r"\bEADDRINUSE\b|\b[Aa]ddress already in use\b|\b[Pp]ort \d+ is (?:already )?in use\b"
    r"|\b[Pp]ort is already (?:in use|allocated)\b",
    A,
    "Stop the process that holds the port or start the server on a different port.",
    "port already in use",
)

# Harness: another process holds a lock the command needs (a package manager running, a
# database busy); it ends when that process does.
LOCK_HELD = Signature(
    "lock_held",
    r"\bCould not get lock\b|\bUnable to acquire the dpkg frontend lock\b"
    r"|\bdatabase is locked\b|\bSQLITE_BUSY\b|\bis locked by another process\b"
    r"|\bWaiting for cache lock\b|\bText file busy\b",
    H,
    "Wait for the other process that holds the lock to finish, then retry.",
    "lock held by another process",
    retryable=True,
)

# Harness: the disk or quota is full; no argument change fixes it.
DISK_FULL = Signature(
    "disk_full",
    r"\bENOSPC\b|\bNo space left on device\b|\bDisk quota exceeded\b|\bEDQUOT\b"
    r"|(?i:\bnot enough (?:free )?disk space\b)",
    H,
    "Free disk space (delete build artefacts, caches or old checkpoints) before writing again.",
    "disk full",
)

# Harness: something outside the process killed it (OOM killer, a supervisor, a limit).
PROCESS_KILLED = Signature(
    "process_killed",
    r"\bKilled\b|\bSIGKILL\b|\bSIGTERM\b|\bOOMKilled\b|\bOOM[- ]?[Kk]ill(?:ed|er)\b"
    r"|\bOut of memory: Killed process\b|(?i:\bprocess (?:was )?killed\b)"
    rf"|{_EXIT}(?:137|143)\b|\bkilled by signal 9\b"
    r"|\bexit status -9\b|\bsignal 9\b",
    H,
    "Run it again with lower memory use or a longer time limit; the process was killed "
    "from outside.",
    "process killed",
    retryable=False,
)

# Unknown: a crash in native code can be the agent's input or a broken library build.
SEGFAULT = Signature(
    "segfault",
    r"\bSegmentation fault\b|\bSIGSEGV\b|\b[Ss]egfault\b|\bsignal 11\b|\bEXC_BAD_ACCESS\b"
    rf"|{_EXIT}139\b|\bexit status -11\b",
    U,
    "Rerun with smaller inputs or a different library version to find the native call that "
    "crashes; do not repeat the identical command.",
    "segmentation fault",
)

# Agent: it ran a program that is not installed or not on PATH. Not deterministic: the fix
# (installing it) often happens outside the guarded tools; a guarded install also makes
# the failure stale.
COMMAND_NOT_FOUND = Signature(
    "command_not_found",
    r"\bcommand not found\b|\bis not recognized as an internal or external command\b"
    r"|\bexecutable file not found in \$PATH\b|\bspawn \S+ ENOENT\b"
    r"|\b(?:sh|dash|ash): (?:\d+: |line \d+: )?[\w.+-]{1,100}: not found\b"
    rf"|{_EXIT}127\b|\bnon-zero exit status 127\b",
    A,
    "Check the program's name, or install it first; use a command that exists in this "
    "environment.",
    "command not found",
)

# Agent: it read a whole file too large for the tool; the identical read is too large again.
FILE_TOO_LARGE = Signature(
    "file_too_large",
    r"\bMaxFileReadTokenExceededError\b|\bFile content \(\d+ tokens\) exceeds maximum\b"
    r"|(?i:\bfile (?:is )?too large to (?:read|open|display)\b)"
    r"|(?i:\bexceeds (?:the )?maximum allowed (?:tokens|size)\b)",
    A,
    "Read the file in parts with an offset and a limit, or search it for what you need, "
    "instead of reading it whole.",
    "file too large to read whole",
    deterministic=True,
)

# Agent: it named a path that does not exist; other calls needing it fail too.
FILE_NOT_FOUND = Signature(
    "file_not_found",
    r"\bENOENT\b|(?i:\bno such file or directory\b)|\bFileNotFoundError\b"
    r"|\b(?:[Ff]ile|[Dd]irectory|[Pp]ath|[Ff]older)\b(?:[^\n.]|\.(?=\S)){0,80}?"
    r"\b(?:does not exist|doesn't exist|not found|cannot be found|could not be found)\b"
    r"|\bThe system cannot find the (?:file|path) specified\b"
    r"|\bdid not match any file\(s\) known to git\b|\bNoSuchFileException\b",
    A,
    "List the directory to find the right path before using it; do not use this path "
    "again until it has been created.",
    "file not found",
    deterministic=True,
    target_fact=True,
    exception_types={"FileNotFoundError", "NoSuchFileException"},
)

# Unknown: a protected target (agent's choice) or a sandbox/credential set-up (harness's).
PERMISSION_DENIED = Signature(
    "permission_denied",
    r"\bPermission denied\b|\bEACCES\b|\bEPERM\b|\bOperation not permitted\b"
    r"|\bPermissionError\b|\bAccess (?:is )?denied\b|(?i:\b403 forbidden\b)"
    rf"|\b{CODE} 403\b|\bPermissionDeniedError\b|\bResource not accessible by\b"
    r"|\bdoes not have permission\b|(?i:\binsufficient permissions?\b)",
    U,
    "Do not retry this target with the same permissions; use a path or resource you are "
    "allowed to access, or report that access is needed.",
    "permission denied",
    deterministic=True,
    status_codes={403},
    exception_types={"PermissionError", "PermissionDeniedError"},
)

# Agent: the target already exists or was changed concurrently; the same call conflicts.
CONFLICT = Signature(
    "conflict",
    r"\bEEXIST\b|\b[Aa]lready exists\b|\bFileExistsError\b|(?i:\b409 conflict\b)"
    rf"|\b{CODE} 409\b|\b[Mm]erge conflict\b|\bCONFLICT \(content\)"
    r"|\bAutomatic merge failed\b|\bUNIQUE constraint failed\b"
    r"|\bduplicate key value violates unique constraint\b|\bUniqueViolation\b"
    r"|\bDuplicate entry '[^'\n]{0,200}' for key\b|\bER_DUP_ENTRY\b"
    r"|\bis already checked out at\b|\bis already used by worktree at\b",
    A,
    "Use the existing resource, choose a new name, or resolve the conflict before "
    "creating it again.",
    "conflict: already exists",
    deterministic=True,
    status_codes={409},
    exception_types={"FileExistsError", "ConflictError"},
)

# Agent: it committed with nothing staged.
NOTHING_TO_COMMIT = Signature(
    "nothing_to_commit",
    r"\bnothing to commit, working (?:tree|directory) clean\b"
    r"|\bnothing added to commit but untracked files present\b"
    r"|\bno changes added to commit\b",
    A,
    "Run git status: stage the changes you mean to commit, or skip the commit; the same "
    "commit has nothing in it.",
    "nothing to commit",
)

# Agent: it pushed a branch that is behind its remote; pulling first fixes it.
GIT_PUSH_REJECTED = Signature(
    "git_push_rejected",
    r"\(non-fast-forward\)|\[rejected\][^\n]{0,200}\(fetch first\)"
    r"|\bUpdates were rejected because\b",
    A,
    "Fetch and integrate the remote changes (pull or rebase) before pushing again; do not "
    "force-push over them.",
    "push rejected: the remote has newer commits",
)

# Unknown: the package manager found no such package or version. A typo is the agent's, but
# registry outages, mirrors and index settings produce the identical words.
PACKAGE_NOT_FOUND = Signature(
    "package_not_found",
    r"\bis not in (?:the npm|this) registry\b|\b404 Not Found - GET https?://\S*registry"
    r"|\bCouldn't find package \"|\bCould not find a version that satisfies the requirement\b"
    r"|\bNo matching distribution found for\b|\bno matching package named\b"
    r"|\bUnable to locate package\b",
    U,
    "Check the package name and version against the registry (search it) before "
    "installing again; if the name is right, check the registry settings.",
    "package not found",
)

# Agent: make was asked for a target the Makefile does not define; until the Makefile
# changes (a manifest: editing it lifts the ban), the same target is missing again.
MAKE_TARGET_MISSING = Signature(
    "make_target_missing",
    r"\bNo rule to make target\b",
    A,
    "List the targets the Makefile defines (read the Makefile) and use one of them; this "
    "target does not exist.",
    "make target does not exist",
    deterministic=True,
)

# Unknown: a command exited non-zero (failing tests, a build); rerunning after edits is fine.
COMMAND_FAILED = Signature(
    "command_failed",
    rf"{_EXIT}(?:[1-9]\d*|-\d+)\b"
    r"|\b(?:exit_code|exitcode|returncode)[=:] ?(?:[1-9]\d*|-\d+)\b"
    r"|\b[Nn]on-?zero exit (?:status|code)\b|\bCommand failed\b"
    r"|\bmake(?:\[\d+\])?: \*\*\*|\bnpm ERR!|\bELIFECYCLE\b",
    U,
    "Read the command's output to find the first error and fix its cause before running "
    "the same command again.",
    "command failed",
)
