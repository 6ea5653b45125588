"""harness.import_cycles: the `make lint` contract that no module imports itself back."""

from __future__ import annotations

import grimp

from harness.import_cycles import import_cycles


def graph(*imports: tuple[str, str]) -> grimp.ImportGraph:
    built = grimp.ImportGraph()
    for importer, imported in imports:
        built.add_import(importer=importer, imported=imported)
    return built


def test_a_one_way_graph_has_no_cycles():
    g = graph(("app.api", "app.services"), ("app.services", "app.models"), ("app.api", "app.models"))
    assert import_cycles(g, set(g.modules)) == []


def test_a_package_imported_back_by_its_own_module_is_a_cycle():
    g = graph(
        ("app.services", "app.services.outbox"),
        ("app.services.outbox", "app.services"),
        ("app.services.outbox", "app.models"),
    )
    assert import_cycles(g, set(g.modules)) == [["app.services", "app.services.outbox"]]


def test_each_circle_is_reported_once_with_all_its_modules():
    g = graph(("a.x", "a.y"), ("a.y", "a.z"), ("a.z", "a.x"), ("b.p", "b.q"), ("b.q", "b.p"), ("a.x", "b.p"))
    assert import_cycles(g, set(g.modules)) == [["a.x", "a.y", "a.z"], ["b.p", "b.q"]]


def test_only_the_modules_asked_about_count():
    g = graph(("app.a", "lib.b"), ("lib.b", "app.a"))
    assert import_cycles(g, {"app.a"}) == []
