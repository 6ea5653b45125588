"""Who may use the Manager console, and which projects they see.

Signed-in staff only: an anonymous visitor is sent to the login page; a signed-in user without
staff rights is refused with 403 (never redirected in a loop, never shown any data).

A staff account sees and administers only the projects it is a member of (`Project.members`);
a superuser sees all. Every console read goes through `visible_projects` / `project_for`, so
another project's ids answer 404, exactly like ids that do not exist.
"""

from __future__ import annotations

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.db.models import QuerySet
from django.http import Http404
from django.shortcuts import render

from projects.models import Project


def staff_required(view):
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        user = request.user
        if not user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not (user.is_active and user.is_staff):
            return render(request, "console/no_access.html", status=403)
        return view(request, *args, **kwargs)

    return wrapper


def is_staff(user) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_active and user.is_staff)


def sees_all(user) -> bool:
    return bool(is_staff(user) and user.is_superuser)


def visible_projects(user) -> QuerySet[Project]:
    """The projects this console user may see: all for a superuser, else those it belongs to."""
    if sees_all(user):
        return Project.objects.all()
    if not is_staff(user):
        return Project.objects.none()
    return Project.objects.filter(members=user)


def project_scope(user, project_id: str | None) -> Project | None:
    """The `?project=` filter: None when not given; 404 when not one of the user's projects."""
    if not project_id:
        return None
    return project_for(user, project_id)


def project_for(user, project_id: str) -> Project:
    project = visible_projects(user).filter(pk=project_id).first()
    if project is None:
        raise Http404("No such project.")
    return project


def add_member(project: Project, user) -> None:
    """Make a staff account a member of a project (e.g. the one it just created)."""
    if is_staff(user):
        project.members.add(user)
