#!/usr/bin/env python3
"""Qualifies DocC symbol links that name a type of another module, for the combined documentation
(scripts/docs.sh): ``CurlewError`` in Curlew's documentation becomes ``/CurlewCore/CurlewError``; a type
of a module that is not a dependency is named in code voice instead. Run it after moving types
between modules:  python3 scripts/qualify-doc-links.py . Curlew,CurlewCore,CurlewResilience,…"""
import os, re, sys
root = sys.argv[1] if len(sys.argv) > 1 else '.'
modules = sys.argv[2].split(',') if len(sys.argv) > 2 else ['Curlew', 'CurlewCore']
decl = re.compile(r'^(?:@\w+(?:\([^)]*\))?\s+)*(?:public|open)\s+(?:(?:final|indirect)\s+)*(?:struct|class|enum|protocol|actor|typealias)\s+(\w+)')
func = re.compile(r'^(?:@\w+(?:\([^)]*\))?\s+)*public\s+(?:func|var|let)\s+(\w+)')
types = {}
for m in modules:
    names = set()
    for d, _, files in os.walk(os.path.join(root, 'Sources', m)):
        for f in files:
            if f.endswith('.swift'):
                for line in open(os.path.join(d, f), encoding='utf-8'):
                    mt = decl.match(line) or func.match(line)
                    if mt: names.add(mt.group(1))
    types[m] = names
deps = {'Curlew': {'CurlewCore'}, 'CurlewResilience': {'Curlew'}, 'CurlewDecoding': {'Curlew'}, 'CurlewFleet': {'Curlew'},
        'CurlewOpenAPI': {'Curlew'}, 'CurlewTesting': {'Curlew', 'CurlewDecoding'}}  # direct dependencies (Package.swift)
link = re.compile(r'``([A-Za-z_][A-Za-z0-9_]*)((?:[/(][^`]*)?)``')
changed = 0
for m in modules:
    own = types[m]
    for d, _, files in os.walk(os.path.join(root, 'Sources', m)):
        for f in files:
            if not (f.endswith('.swift') or f.endswith('.md')): continue
            path = os.path.join(d, f)
            text = open(path, encoding='utf-8').read()
            def fix(match):
                name, rest = match.group(1), match.group(2)
                if name in own or name in modules: return match.group(0)
                owners = [o for o in modules if o != m and name in types[o]]
                if len(owners) != 1: return match.group(0)
                owner = owners[0]
                if owner in deps.get(m, set()):
                    return '``/%s/%s%s``' % (owner, name, rest)
                # A module's documentation links only into its dependencies: code voice otherwise.
                return '`%s%s`' % (name, rest.replace('/', '.'))
            if f.endswith('.swift'):
                # only in comments
                out = []
                for line in text.split('\n'):
                    i = line.find('//')
                    if i >= 0: line = line[:i] + link.sub(fix, line[i:])
                    out.append(line)
                new = '\n'.join(out)
            else:
                new = link.sub(fix, text)
            if new != text:
                changed += 1
                open(path, 'w', encoding='utf-8').write(new)
print('files changed:', changed)
