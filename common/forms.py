"""Error messages as a person reads them on a form: a sentence that names the field.

Services say what is wrong in a predicate ("must be a number, got 'abc'") under a field path, and
Django's own field messages name no field ("This field is required."). ``error_sentence`` puts the
field's name in front of either; ``NamedErrorsMixin`` does it for every field error of a form.
"""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS
from django.forms.utils import pretty_name

# Django's openings that stand for the field, and what follows the field's name instead.
_DJANGO_OPENINGS = (
    ("This field ", ""),
    ("Ensure this value has ", "must have "),
    ("Ensure this value is ", "must be "),
    ("Ensure this value ", "must "),
)
# A lowercase message opening with one of these names its own subject ("question 5 is closed").
_SUBJECTS = ("question", "replay", "forecast", "agent", "session", "this", "the", "your")
_WORD = re.compile(r"[a-z]{4,}")


def _names(text: str, name: str) -> bool:
    """Whether ``text`` mentions ``name`` (one of its words of four letters or more, plural or not)."""
    lowered = text.lower()
    return any(word.rstrip("s") in lowered for word in _WORD.findall(name.lower()) if word != "the")


def error_sentence(name: str, message: str) -> str:
    """``message`` as a sentence naming ``name``: a predicate ("must be a number") follows the
    name; Django's "This field …" and "Ensure this value …" take the name instead; a message that
    names its subject itself ("question 5 is closed", "A user with that username already exists.")
    is kept; any other gets the name in front. Capitalised, ending in a full stop."""
    text = " ".join(str(message).split())
    for opening, instead in _DJANGO_OPENINGS:
        if text.startswith(opening):
            text = f"{name} {instead}{text[len(opening) :]}"
            break
    else:
        if text[:1].islower():
            if text.split(" ", 1)[0].lower() not in _SUBJECTS:
                text = f"{name} {text}"
        elif not _names(text, name):
            text = f"{name}: {text}"
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else f"{text}."


def field_name(form: forms.BaseForm, field: str) -> str:
    """How a field is named in a sentence: "The " and its label, lowercased unless it is a name
    like "P(Yes)"."""
    label = str(form.fields[field].label or pretty_name(field))
    return label if label[:2] == "P(" else f"The {label[0].lower()}{label[1:]}"


class NamedErrorsMixin:
    """Every field error of the form becomes a sentence naming its field (``error_sentence``)."""

    def full_clean(self) -> None:
        super().full_clean()  # type: ignore[misc]
        form: Any = self
        for name, errors in list(form._errors.items()):
            if name == NON_FIELD_ERRORS or name not in form.fields:
                continue
            form._errors[name] = form.error_class(
                [error_sentence(field_name(form, name), m) for m in errors], renderer=form.renderer
            )
