#!/usr/bin/env python3
"""Extract every ```swift block of a Markdown file into one compilable Swift source file.

Usage:
  python3 scripts/readme-examples.py README.md OUTPUT.swift [--extra-import MODULE ...]
                                    [--conditional-import MODULE ...]

Rules (stdlib only, deterministic output):
- A block whose fence line is preceded (ignoring blank lines) by `<!-- no-compile -->` is skipped.
- With `--conditional-import MODULE` (always for CurlewFleet), a block that imports MODULE is compiled only where MODULE
  can be imported (`#if canImport(MODULE)`), and its import is not hoisted: the same file builds
  in a package or build that leaves that product out (Integration/ServerNames, the
  AddressSanitizer build without CurlewFleet and its PostgreSQL client).
- `import` lines are removed from blocks and hoisted to the top of the file, after the imports a
  user writes (`import Curlew`, `import Foundation`, `import HTTPTypes`) and the `--extra-import`
  modules, in order of first appearance, without duplicates.
- A block that consists only of declarations (struct, enum, class, actor, protocol, extension,
  func, typealias, macro, operator, precedencegroup; `let`/`var` only beside one of those and
  without `try`/`await`) is copied at file scope, so later blocks can use its names.
- Any other block is wrapped, unchanged, in its own
  `@Sendable func readmeExample<N>() async throws { … }` (N = the block's ordinal among the swift
  blocks of the file, counting skipped ones, so numbers do not move when a block is skipped).
- `#sourceLocation` directives map every copied line back to the Markdown file, so a compiler
  error names the README line to fix.
"""
import os
import re
import sys

from swift_source import blank_literals

BASE_IMPORTS = ["Curlew", "Foundation", "HTTPTypes"]
# Products a build may leave out (see --conditional-import): always conditional.
CONDITIONAL_IMPORTS = ["CurlewFleet"]
NO_COMPILE = "<!-- no-compile -->"
FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^\s`]*)")
IMPORT = re.compile(
    r"^\s*(?:@[A-Za-z_]\w*(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?"
    r"import\s+(?:(?:struct|class|enum|protocol|typealias|func|var|let)\s+)?([A-Za-z_][\w.]*)\s*(?://.*)?$"
)
TYPE_DECL = {"struct", "enum", "class", "actor", "protocol", "extension", "func", "typealias",
             "macro", "operator", "precedencegroup", "subscript", "init"}
BINDING = {"let", "var"}
MODIFIERS = {"public", "open", "package", "internal", "fileprivate", "private", "final", "indirect",
             "nonisolated", "static", "dynamic", "prefix", "postfix", "infix", "distributed",
             "borrowing", "consuming", "lazy", "weak", "unowned", "override", "required",
             "convenience", "mutating", "nonmutating"}


def statements(code):
    """The block's top-level statements, as the text of each at nesting depth 0."""
    flat, depth = [], 0
    for c in blank_literals(code):
        if c in "{([":
            depth += 1
            flat.append(" ")
        elif c in "})]":
            depth = max(0, depth - 1)
            flat.append(" ")
        elif depth == 0:
            flat.append(c)
    stmts = []
    for line in "".join(flat).replace(";", "\n").split("\n"):
        line = line.strip()
        if not line:
            continue
        continuation = (
            stmts
            and (re.match(r"^(\.|[-+*/%=<>!&|^?:,]|else\b|where\b|catch\b|in\b|async\b|throws\b|->)", line)
                 or re.search(r"([-+*/%=<>&|^?:,.]|\bin|->)$", stmts[-1])
                 or re.fullmatch(r"(@[A-Za-z_]\w*\s*)+", stmts[-1]))
        )
        if continuation:
            stmts[-1] += " " + line
        else:
            stmts.append(line)
    return stmts


def leading_keyword(stmt):
    words = re.findall(r"@[A-Za-z_]\w*|[A-Za-z_]\w*|\S", stmt)
    for w in words:
        if w.startswith("@") or w in MODIFIERS:
            continue
        return w
    return ""


def is_declarations(code):
    stmts = statements(code)
    if not stmts:
        return True
    kinds = [leading_keyword(s) for s in stmts]
    if not all(k in TYPE_DECL or k in BINDING for k in kinds):
        return False
    if not any(k in TYPE_DECL for k in kinds):
        return False          # only `let`/`var`: an example to run, not definitions
    for s, k in zip(stmts, kinds):
        if k in BINDING and re.search(r"\b(try|await)\b", s):
            return False
    return True


def swift_blocks(lines):
    """Yield (ordinal, first_content_line_number, content_lines, skipped) for ```swift blocks."""
    i, ordinal = 0, 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m.group(2), m.group(3).lower()
        j = i + 1
        while j < len(lines):
            e = FENCE.match(lines[j])
            if e and e.group(2)[0] == fence[0] and len(e.group(2)) >= len(fence) and not e.group(3):
                break
            j += 1
        if lang == "swift":
            ordinal += 1
            k = i - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            skipped = k >= 0 and lines[k].strip() == NO_COMPILE
            yield ordinal, i + 2, lines[i + 1:j], skipped
        i = j + 1


def generate(markdown_path, extra_imports, conditional_modules=()):
    with open(markdown_path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    source_name = markdown_path.replace("\\", "/")
    imports = list(BASE_IMPORTS) + [m for m in extra_imports if m not in BASE_IMPORTS]
    body, summary = [], []
    for ordinal, first_line, content, skipped in swift_blocks(lines):
        if skipped:
            summary.append(f"//   block {ordinal} ({source_name}:{first_line - 1}): skipped (no-compile)")
            continue
        condition = next((m.group(1) for m in map(IMPORT.match, content) if m and m.group(1) in conditional_modules), None)
        kept, block_imports = [], []
        for line in content:
            m = IMPORT.match(line)
            if m and condition:
                kept.append("")
                block_imports.append(line.strip())
            elif m:
                if m.group(1) not in imports:
                    imports.append(m.group(1))
                kept.append("")
            else:
                kept.append(line)
        while kept and not kept[-1].strip():
            kept.pop()
        code = "\n".join(kept)
        declarations = is_declarations(code)
        kind = "declarations, file scope" if declarations else f"statements, readmeExample{ordinal}()"
        if condition:
            kind += f", where {condition} can be imported"
        summary.append(f"//   block {ordinal} ({source_name}:{first_line - 1}): {kind}")
        body.append("")
        body.append(f"// MARK: block {ordinal}, {source_name}:{first_line - 1}")
        if condition:
            body.append(f"#if canImport({condition})")
            body.extend(block_imports)
        if not declarations:
            body.append(f"@Sendable func readmeExample{ordinal}() async throws {{")
        body.append(f'#sourceLocation(file: "{source_name}", line: {first_line})')
        body.extend(kept)
        body.append("#sourceLocation()")
        if not declarations:
            body.append("}")
        if condition:
            body.append("#endif")
    header = [
        f"// Generated by scripts/readme-examples.py from {source_name}. Do not edit: edit the README.",
        "// Blocks:",
        *summary,
        "",
        *[f"import {m}" for m in imports],
    ]
    return "\n".join(header + body) + "\n"


def main(argv):
    args, extra, conditional = [], [], []
    it = iter(argv)
    for a in it:
        if a == "--conditional-import":
            conditional.append(next(it, None) or sys.exit("--conditional-import needs a module name"))
        elif a == "--extra-import":
            extra.append(next(it, None) or sys.exit("--extra-import needs a module name"))
        elif a.startswith("--extra-import="):
            extra.append(a.split("=", 1)[1])
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            args.append(a)
    if len(args) != 2:
        sys.stderr.write(__doc__)
        return 2
    markdown, output = args
    text = generate(markdown, extra, CONDITIONAL_IMPORTS + conditional)
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    try:
        with open(output, encoding="utf-8") as f:
            if f.read() == text:
                return 0          # unchanged: keep the timestamp, no rebuild
    except FileNotFoundError:
        pass
    with open(output, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
