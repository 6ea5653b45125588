"""What the console's pages do alike: the page number a list is asked for, and the template a
request renders (only the changed part, `page.html#partial`, when it comes from htmx)."""

from __future__ import annotations


def page_number(request, name: str = "page") -> int:
    try:
        return max(1, int(request.GET.get(name, "1")))
    except ValueError:
        return 1


def partial_template(request, template: str, partial: str) -> str:
    return f"{template}#{partial}" if request.htmx else template
