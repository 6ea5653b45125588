"""An import-linter contract type (`make lint`): no module imports itself back through others.

import-linter's `acyclic_siblings` compares the children of each package; an import of a package
by one of its own modules (`memories.services.x` importing `memories.services`, whose
`__init__` imports `x`) is outside what it compares, yet it is a circle at import time. This
contract looks at the module graph itself: any cycle among the modules of `containers`, through
module-level and function-level imports alike (grimp records both), breaks it.
"""

from __future__ import annotations

from grimp import ImportGraph
from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck


def import_cycles(graph: ImportGraph, modules: set[str]) -> list[list[str]]:
    """The strongly connected groups of more than one module among `modules` (Tarjan's algorithm,
    iterative), each sorted, in name order."""
    index: dict[str, int] = {}
    lowest: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def imported(module: str) -> list[str]:
        return sorted(m for m in graph.find_modules_directly_imported_by(module) if m in modules)

    for root in sorted(modules):
        if root in index:
            continue
        work = [(root, iter(imported(root)))]
        index[root] = lowest[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, pending = work[-1]
            step = next(pending, None)
            if step is not None:
                if step not in index:
                    index[step] = lowest[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(imported(step))))
                elif step in on_stack:
                    lowest[module] = min(lowest[module], index[step])
                continue
            work.pop()
            if work:
                lowest[work[-1][0]] = min(lowest[work[-1][0]], lowest[module])
            if lowest[module] == index[module]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == module:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return sorted(found)


class NoModuleCyclesContract(Contract):
    """Configuration: `containers`, the packages whose modules must import one another one way."""

    type_name = "no_module_cycles"

    containers = fields.ListField(subfield=fields.StringField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        containers = list(self.containers)  # type: ignore[call-overload]
        modules = {m for m in graph.modules if any(m == c or m.startswith(c + ".") for c in containers)}
        cycles = []
        for group in import_cycles(graph, modules):
            links = []
            for importer in group:
                for target in sorted(graph.find_modules_directly_imported_by(importer)):
                    if target in group:
                        lines = [
                            d["line_number"]
                            for d in graph.get_import_details(importer=importer, imported=target)
                        ]
                        links.append((importer, target, lines))
            cycles.append({"modules": group, "imports": links})
        return ContractCheck(kept=not cycles, metadata={"cycles": cycles})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for cycle in check.metadata["cycles"]:
            output.print_error(f"These modules import one another in a circle: {', '.join(cycle['modules'])}")
            for importer, target, lines in cycle["imports"]:
                output.print_error(f"- {importer} -> {target} (l. {', '.join(map(str, lines))})")
            output.new_line()
