"""The default bank's signatures of the agent's code, edits and queries.

Edits whose text is not (or not once) in the file, patches and code that do not parse or
compile, imports, module systems, tables and rows, selectors and queries that match
nothing. Data of :mod:`scarguard.naming.bank`, which orders every signature of the default
bank (first match wins); each comment says whose choice would have to change for the call to
succeed.
"""

from __future__ import annotations

from scarguard.model import Blame
from scarguard.naming._signature import Signature

__all__ = [
    "AMBIGUOUS_EDIT",
    "COMPILE_FAILURE",
    "CONSTRAINT_VIOLATION",
    "EDIT_FAILED",
    "ELEMENT_NOT_FOUND",
    "EMPTY_RESULT",
    "ESM_CJS_MISMATCH",
    "MODULE_NOT_FOUND",
    "PATCH_INVALID",
    "SYNTAX_ERROR",
    "UNKNOWN_TABLE",
]

A = Blame.AGENT

# Agent: module syntax of the file does not fit the package's module type.
ESM_CJS_MISMATCH = Signature(
    "esm_cjs_mismatch",
    r"\bCannot use import statement outside a module\b|\brequire\(\) of ES [Mm]odule\b"
    r"|\bERR_REQUIRE_ESM\b|\b(?:exports|require|module) is not defined in ES module scope\b"
    r"|\bMust use import to load ES Module\b|\bTo load an ES module, set\b",
    A,
    'Use one module system per file: import/export with "type": "module" or .mjs, or '
    "require/module.exports in .cjs; do not mix them.",
    "ES module / CommonJS mismatch",
    deterministic=True,
)

# Agent: its search text occurs several times; identical input is ambiguous again.
AMBIGUOUS_EDIT = Signature(
    "ambiguous_edit",
    r"\b[Ff]ound \d+ matches of the string to replace\b|\bMultiple occurrences of old_str\b"
    r"|\bold_str(?:ing)? (?:is not unique|must be unique|matches multiple)\b"
    r"|(?i:\bsearch (?:string|text|block) (?:is ambiguous|matches \d+ (?:times|locations)))"
    r"|(?i:\b(?:appears|occurs) \d+ times in the file\b)"
    r"|\bexpected 1 occurrences?(?:\(s\))? but found [2-9]\d*\b",
    A,
    "Include more surrounding lines in the text to replace so it occurs exactly once, or "
    "ask to replace every occurrence.",
    "edit search string not unique",
    deterministic=True,
)

# Agent: the patch it wrote does not parse (a missing header, end marker or hunk line
# count); the same patch is rejected identically, before any file is read.
PATCH_INVALID = Signature(
    "patch_invalid",
    r"(?i:\binvalid patch\b)|\bThe (?:first|last) line of the patch must be\b"
    r"|\b(?:corrupt|malformed) patch at line \d+|\bmissing line number at line \d+"
    r"|\bOnly garbage was found in the patch input\b|\bpatch fragment without header\b"
    r"|\bNo valid patches in input\b",
    A,
    "Rewrite the patch in the exact format the tool expects (its header, hunk lines and "
    "end marker) instead of sending the same patch again.",
    "patch could not be parsed",
    deterministic=True,
)

# Agent: its search text is not in the file; the same text fails identically. The OpenAI
# Agents SDK's `apply_diff` (V4A patches) says so as `Invalid Context 3:` (the context lines
# of a hunk) or `Invalid Anchor 0:` (its `@@ def f():` line) followed by the missing text;
# the MCP filesystem server's `edit_file` as `Could not find exact match for edit:`.
EDIT_FAILED = Signature(
    "edit_failed",
    r"(?i:\b(?:old_str(?:ing)?|search (?:string|text|block)|(?:string|text) to replace)\b"
    r"[^.\n]{0,60}?\b(?:not found|did not appear|was not found|could not be found|not present"
    r"|failed to (?:exactly )?match|does not match)\b)|\bno match(?:es)? found for search\b"
    r"|\bSearchReplaceNoExactMatch\b|\bThe SEARCH block failed to exactly match\b"
    r"|\b0 occurrences found for old_str(?:ing)?\b|\bold_str(?:ing)? found 0 times\b"
    r"|\bexpected 1 occurrences?(?:\(s\))? but found 0\b"
    r"|\bdoes not match anything in the file\b|\bFailed to find expected lines\b"
    r"|\bpatch does not apply\b|\bInvalid (?:EOF )?Context \d+:|\bInvalid Anchor \d+:"
    r"|\bCould not find exact match for edit\b",
    A,
    "Read the file again and copy the exact text to replace, including whitespace; do "
    "not retry the same search string.",
    "edit search string not found",
    deterministic=True,
)

# Agent: it imported a module that is not installed or a name the module lacks. Not
# deterministic: the fix (an install) often happens outside the guarded tools; a guarded
# `pip install` also makes the failure stale.
MODULE_NOT_FOUND = Signature(
    "module_not_found",
    r"\bNo module named\b|\bCannot find module\b|\bcannot import name\b"
    r"|\bERR_MODULE_NOT_FOUND\b|\bCannot find package\b|\bCan't resolve '[^'\n]*'"
    r"|\bunresolved import\b",
    A,
    "Check the module name and the installed packages; install the dependency or import "
    "from the module that defines the name.",
    "module not found",
    exception_types={"ModuleNotFoundError"},
)

# Agent: its query names a table or column the database does not have; until a migration
# creates it, the same query fails identically.
UNKNOWN_TABLE = Signature(
    "unknown_table",
    r"(?i:\bno such (?:table|column)\b)|\bTable '[^'\n]{1,200}' doesn't exist\b"
    r"|\b(?:relation|column) \"[^\"\n]{1,200}\" "
    r"(?:of relation \"[^\"\n]{1,200}\" )?does not exist\b"
    r"|\bUnknown column '[^'\n]{1,200}' in\b|\bUndefined(?:Table|Column)\b"
    r"|\btable_names \{[^}\n]{0,200}\} not found in database\b|\bInvalid object name '",
    A,
    "List the tables and their columns first and use names that exist; the same query "
    "fails again until the schema changes.",
    "unknown table or column",
    deterministic=True,
)

# Agent: the code or JSON it wrote does not parse.
SYNTAX_ERROR = Signature(
    "syntax_error",
    r"\bSyntaxError\b|\bIndentationError\b|\bTabError\b|\bJSONDecodeError\b"
    r"|\bExpecting (?:value|property name enclosed in double quotes|'[,:]' delimiter): line\b"
    r"|\bUnexpected token\b[^\n]*\bin JSON\b"
    r"|\bUnterminated string starting at\b|\binvalid syntax\b|\bunexpected EOF while parsing\b"
    r"|\bYAMLError\b|\bwhile parsing a (?:block|flow) (?:mapping|sequence)\b"
    r"|\bJSON\.parse: |(?i:\bunexpected end of JSON input\b)|\bis not valid JSON\b"
    r"|\binvalid character '[^'\n]{1,8}' "
    r"(?:looking for beginning|after (?:object key|top-level))"
    r"|(?i:\bsyntax error at or near\b)|\bYou have an error in your SQL syntax\b"
    r"|\bnear \"[^\"\n]{0,100}\": syntax error\b",
    A,
    "Fix the syntax at the reported line (brackets, quotes, indentation, commas) and "
    "check the whole file parses before running it again.",
    "syntax error",
    deterministic=True,
    exception_types={"SyntaxError", "IndentationError", "TabError", "JSONDecodeError"},
)

# Agent: its code does not compile (before file_not_found: a missing header is not a target
# fact about the compiled file; not deterministic: builds rerun after edits).
COMPILE_FAILURE = Signature(
    "compile_failure",
    r"\berror\[E\d{4}\]|\berror TS\d+\b|\bcompilation terminated\b|\b[Cc]ompilation failed\b"
    r"|\bcould not compile\b|\b\d+:\d+: (?:fatal )?error\b|\bBUILD FAILURE\b"
    r"|\bFound [1-9]\d* errors?\b",
    A,
    "Fix the first reported compiler error at its file and line, then build again.",
    "compilation failed",
)

# Agent: its selector or element index matches nothing on the page; the page can change
# (loading, navigation), so one failure is not enough.
ELEMENT_NOT_FOUND = Signature(
    "element_not_found",
    r"\bNoSuchElementException\b|\bUnable to locate element\b|\bNo node found for selector\b"
    r"|\bfailed to find element matching selector\b|\bNo element found for selector\b"
    r"|\bElement (?:with )?index \d+ does not exist\b"
    r"|\bstrict mode violation: [^\n]{0,200}\bresolved to \d+ elements\b",
    A,
    "Read the page again (its current elements and their indices) and target an element "
    "that is there; do not repeat the same selector.",
    "page element not found",
)

# Agent: its insert or update breaks a NOT NULL, foreign key or check constraint (whether
# the identical statement fails again can depend on other rows, so not deterministic).
CONSTRAINT_VIOLATION = Signature(
    "constraint_violation",
    r"\bNOT NULL constraint failed\b|\bviolates (?:not-null|foreign key|check) constraint\b"
    r"|\bFOREIGN KEY constraint failed\b|\ba foreign key constraint fails\b"
    r"|\bCHECK constraint failed\b|\bColumn '[^'\n]{1,200}' cannot be null\b"
    r"|\bIntegrity constraint violation\b|\bNotNullViolation\b|\bForeignKeyViolation\b",
    A,
    "Read the table's constraints and supply every required value and an existing "
    "referenced row before writing again.",
    "database constraint violated",
)

# Agent: its query or filter matched nothing.
EMPTY_RESULT = Signature(
    "empty_result",
    r"(?i:\bno (?:results?|matches|records|items|rows|documents|entries|data) "
    r"(?:found|returned|were found|matched)\b)|(?i:\bempty (?:response|result|output|body)\b)"
    r"|(?i:\breturned no (?:results?|data|rows)\b)",
    A,
    "Broaden or change the query instead of repeating it; the same query returns nothing.",
    "empty result",
)
