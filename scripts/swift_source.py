"""Helpers shared by the scripts that read Swift source (readme-examples.py, public-names.py)."""
import re


def blank_literals(text, keep_length=False):
    """Replace comments and string-literal contents with spaces (newlines kept).

    With `keep_length`, a literal becomes spaces of its own length (positions stay valid);
    otherwise it becomes `""` (the statement stays a literal).
    """
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text[i] == '"' or re.match(r'#+"', text[i:i + 8]):
            m = re.match(r'(#*)("""|")', text[i:])
            hashes, quote = m.group(1), m.group(2)
            close = quote + hashes
            j = i + len(m.group(0))
            while j < n:
                if text[j] == "\\" and text.startswith(hashes, j + 1):
                    j += 2 + len(hashes)
                    continue
                if text.startswith(close, j):
                    j += len(close)
                    break
                if quote == '"' and text[j] == "\n":
                    break
                j += 1
            if keep_length:
                out.append(re.sub(r"[^\n]", " ", text[i:j]))
            else:
                out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)
