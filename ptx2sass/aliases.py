"""`.alias a, b;` (PTX ISA: `a` is another name of the function `b`): every use of `a` is a
use of `b`, as ptxas compiles it (its call goes to `b`). Resolved on the checked syntax tree
before lowering, so the inliner and the call lowering see one function; the alias's own
declaration (a prototype without body) is dropped with it."""
from __future__ import annotations

from dataclasses import replace

from ptx2sass.frontend import ast


def function_aliases(module: ast.Module) -> dict[str, str]:
    """`.alias a, b` of the module: a -> b."""
    return {a.alias: a.target for a in module.items if type(a) is ast.Alias}


def resolve_aliases(module: ast.Module) -> ast.Module:
    names = function_aliases(module)
    if not names:
        return module

    def target(name: str) -> str:
        seen = set()
        while name in names and name not in seen:      # (an alias of an alias)
            seen.add(name)
            name = names[name]
        return name

    def renamed(node):
        if type(node) is ast.Name and node.name in names:
            return replace(node, name=target(node.name))
        if type(node) is ast.ParenList:
            return replace(node, elements=[renamed(e) for e in node.elements])
        return node

    def walk(block: ast.Block) -> ast.Block:
        out = []
        for st in block.statements:
            if isinstance(st, ast.Block):
                st = walk(st)
            elif isinstance(st, ast.Instruction) and st.opcode in ("call", "mov", "cvta"):
                st = replace(st, operands=[renamed(o) for o in st.operands])
            out.append(st)
        return replace(block, statements=out)

    items = []
    for item in module.items:
        if type(item) is ast.Alias or isinstance(item, ast.Function) and item.name in names \
                and item.body is None:
            continue
        if isinstance(item, ast.Function) and item.body is not None:
            item = replace(item, body=walk(item.body))
        items.append(item)
    return replace(module, items=items)
