"""A diagnosis's sentences: English in its data, the reader's language when shown.

The data a diagnosis gathers is also ``graphlab diagnose --json``'s output, which stays the same
whatever language graphlab speaks. So a sentence is kept as a :class:`Text`: a ``str`` holding the
English, which is what ``json`` writes and what comparisons see, that also remembers its message
and the values put into it, so that :func:`shown` can say it in the reader's language when the
report is printed (the language is read then, as for every message).
"""

from __future__ import annotations

from typing import Any

from graphlab.language import gettext as _

__all__ = ["Text", "shown"]


class Text(str):
    """``msgid.format(**values)`` in English, translatable when shown (:func:`shown`).

    ``msgid`` is a message marked with ``N_`` where it is written. A value may itself be a
    :class:`Text`, shown in the reader's language too; any other value is put in as it is.
    """

    msgid: str
    values: dict[str, Any]

    def __new__(cls, msgid: str, /, **values: Any) -> Text:
        self = super().__new__(cls, msgid.format(**values) if values else msgid)
        self.msgid = msgid
        self.values = values
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        # Diagnoses on a GPU come back from a child process, pickled.
        return (_rebuild, (self.msgid, self.values))

    def __deepcopy__(self, memo: dict[int, Any]) -> Text:
        return self  # immutable, as a str is

    def __copy__(self) -> Text:
        return self

    def shown(self) -> str:
        """The text in the reader's language."""
        text = _(self.msgid)
        if not self.values:
            return text
        return text.format(
            **{
                name: value.shown() if isinstance(value, Text) else value
                for name, value in self.values.items()
            }
        )


def _rebuild(msgid: str, values: dict[str, Any]) -> Text:
    return Text(msgid, **values)


def shown(text: object) -> str:
    """``text`` in the reader's language when it is a :class:`Text`; otherwise as it is."""
    return text.shown() if isinstance(text, Text) else str(text)
