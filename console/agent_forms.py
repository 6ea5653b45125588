"""Forms for the agent pages: they check shapes; the chat services validate the config itself."""

from __future__ import annotations

from django import forms

from projects.services import secret_name_reserved


class AgentForm(forms.Form):
    project = forms.ChoiceField(choices=[])
    name = forms.CharField(max_length=200, error_messages={"required": "Give the agent a name."})
    slug = forms.SlugField(
        max_length=80,
        required=False,
        label="Slug",
        help_text="Names the public chat page /chat/<slug>/. Empty: derived from the name.",
    )
    config = forms.CharField(
        label="Configuration (JSON)",
        max_length=500_000,
        widget=forms.Textarea(attrs={"rows": 24, "spellcheck": "false"}),
    )

    def __init__(self, *args, projects: list[tuple[str, str]], editing: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["project"].choices = [("", "—")] + projects
        if editing:
            self.fields["project"].required = False
            self.fields["project"].disabled = True


class SecretForm(forms.Form):
    name = forms.RegexField(
        regex=r"^[A-Za-z0-9_.-]{1,100}$",
        max_length=100,
        label="Name",
        help_text="Letters, digits, _ . - — e.g. OPENAI_KEY.",
        error_messages={"invalid": "Use letters, digits, '_', '.' and '-' only."},
    )
    value = forms.CharField(
        label="Value",
        max_length=10_000,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Stored encrypted; it is never shown again, only its last characters.",
    )

    def clean_name(self):
        name = self.cleaned_data["name"]
        if secret_name_reserved(name):
            raise forms.ValidationError(
                "Names starting with 'proxy.' hold the proxy's upstream keys; set those on the Proxy page."
            )
        return name
