"""Console forms: they validate input and hand it to the services, nothing more."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm

from console import throttle


class StaffLoginForm(AuthenticationForm):
    error_messages = {
        **AuthenticationForm.error_messages,
        "not_staff": "This account has no staff access to the Manager console.",
        "locked": "Too many failed sign-ins. Try again in %(minutes)s minutes.",
    }

    def clean(self):
        username = str(self.data.get("username", ""))[:150]
        if throttle.locked(self.request, username):
            minutes = max(1, settings.THREADLESS_LOGIN_LOCKOUT_SECONDS // 60)
            raise forms.ValidationError(
                self.error_messages["locked"], code="locked", params={"minutes": minutes}
            )
        try:
            cleaned = super().clean()
        except forms.ValidationError as exc:
            if getattr(exc, "code", None) == "invalid_login":
                throttle.record_failure(self.request, username)
            raise
        throttle.clear_account(self.request, username)
        return cleaned

    @property
    def locked(self) -> bool:
        return any(error.code == "locked" for error in self.errors.as_data().get("__all__", []))

    def confirm_login_allowed(self, user):
        super().confirm_login_allowed(user)
        if not user.is_staff:
            raise forms.ValidationError(self.error_messages["not_staff"], code="not_staff")


def _optional_int(label: str, help_text: str) -> forms.IntegerField:
    return forms.IntegerField(
        label=label, required=False, min_value=0, max_value=2_000_000_000, help_text=help_text
    )


class ProjectForm(forms.Form):
    name = forms.CharField(max_length=200, error_messages={"required": "Give the project a name."})
    rate_limit_per_minute = _optional_int(
        "Rate limit (requests per minute per key)", "Empty: the server default. 0 turns the limit off."
    )
    allowance_requests_per_month = _optional_int("Plan allowance: requests per month", "Empty: unlimited.")
    allowance_memories = _optional_int("Plan allowance: memories", "Empty: unlimited.")
    retention_days = _optional_int(
        "Retention (days unused before a memory is forgotten)", "Empty: keep forever."
    )

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        if not name:
            raise forms.ValidationError("Give the project a name.")
        return name


class KeyForm(forms.Form):
    kind = forms.ChoiceField(
        choices=[
            ("project", "Project key (full API, keep it secret)"),
            ("publishable", "Publishable key (one agent's end-user chat)"),
        ]
    )
    name = forms.CharField(
        max_length=200,
        required=False,
        label="Label",
        help_text="Where this key is used, e.g. “production backend”.",
    )
    agent = forms.CharField(
        max_length=40,
        required=False,
        label="Agent",
        help_text="Publishable keys only: the agent whose chat this key may use.",
    )

    def __init__(self, *args, agents: list[tuple[str, str]] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.agent_choices = agents or []
        if self.agent_choices:
            self.fields["agent"] = forms.ChoiceField(
                required=False,
                label="Agent",
                choices=[("", "—")] + self.agent_choices,
                help_text="Publishable keys only: the agent whose chat this key may use.",
            )

    def clean(self):
        data = super().clean()
        if data.get("kind") == "publishable" and not data.get("agent"):
            self.add_error("agent", "A publishable key belongs to one agent: choose it.")
        return data


class FactForm(forms.Form):
    text = forms.CharField(
        max_length=2000,
        label="Fact",
        widget=forms.TextInput(attrs={"placeholder": "e.g. The user's dog is called Biscuit."}),
    )


class WhatModelSeesForm(forms.Form):
    message = forms.CharField(max_length=20_000, required=False, label="Next user message (optional)")
    budget_tokens = forms.IntegerField(
        min_value=1, max_value=2_000_000, required=False, label="Budget (tokens)"
    )


class DigestFilterForm(forms.Form):
    project = forms.CharField(required=False)
    agent = forms.CharField(required=False, max_length=40)
    task = forms.CharField(required=False, max_length=200, label="Task id")
    error_type = forms.CharField(required=False, max_length=32, label="Error type")
    since = forms.DateField(required=False, label="From", widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, label="Until", widget=forms.DateInput(attrs={"type": "date"}))
