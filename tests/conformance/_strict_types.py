"""Strict pydantic validators built from the official SDKs' own request types.

The ``openai`` and ``anthropic`` SDKs describe request bodies as ``TypedDict`` classes. As they
ship, a ``TypeAdapter`` over them accepts far too much, for four reasons, each fixed here by
rebuilding every ``TypedDict`` reachable from the root type:

1. Lists are annotated ``Iterable[...]``, which pydantic validates lazily: a bad element inside
   is never looked at. Rebuilt as ``list[...]``.
2. The SDK modules use postponed annotations, so ``__required_keys__`` forgets explicit
   ``Required[...]`` markers and every key looks optional. Requiredness is re-derived from the
   ``Required`` / ``NotRequired`` wrappers (and the class's ``total``).
3. Unknown keys and lax coercions (``"1"`` for ``1``) pass by default; the APIs answer 400 for
   unknown keys. Every rebuilt ``TypedDict`` is ``extra="forbid", strict=True``.
4. Unions that also admit the SDK's *response* models (Anthropic lets ``message.content`` be
   passed back as is) make any dict with a known ``type`` pass, because those models allow
   extra keys. JSON cannot hold model instances, so those branches are pruned.
"""

from __future__ import annotations

import collections.abc
import functools
import typing
from typing import Any
from typing import Union
from typing import get_args
from typing import get_origin

import pydantic
import typing_extensions as te

# arbitrary types: a few file-upload params are typed IO[bytes]; history never uses them.
_STRICT = pydantic.ConfigDict(extra="forbid", strict=True, arbitrary_types_allowed=True)
_LAZY_SEQUENCES = (
    collections.abc.Iterable,
    collections.abc.Sequence,
    collections.abc.MutableSequence,
    collections.abc.Iterator,
    list,
)
_WRAPPERS = (te.Required, te.NotRequired, te.ReadOnly)


def _is_response_model(tp: Any) -> bool:
    """A pydantic model (an SDK response type), or a union / alias / annotation of only those."""
    if isinstance(tp, type) and issubclass(tp, pydantic.BaseModel):
        return True
    origin = get_origin(tp)
    if origin in (te.Annotated, typing.Annotated):
        return _is_response_model(get_args(tp)[0])
    if origin is Union:
        return all(_is_response_model(arg) for arg in get_args(tp))
    if isinstance(tp, te.TypeAliasType):
        return _is_response_model(tp.__value__)
    return False


class _Rebuilder:
    def __init__(self) -> None:
        self.done: dict[int, Any] = {}

    def __call__(self, tp: Any) -> Any:
        if te.is_typeddict(tp):
            return self.typeddict(tp)
        if isinstance(tp, te.TypeAliasType):
            return self(tp.__value__)
        origin = get_origin(tp)
        if origin is None:
            return tp
        args = get_args(tp)
        if origin in (te.Annotated, typing.Annotated):
            annotated: tuple[Any, ...] = (self(args[0]), *tp.__metadata__)
            return te.Annotated[annotated]
        if origin in _LAZY_SEQUENCES:
            return list[self(args[0])] if args else list[Any]  # type: ignore[misc]
        if origin is Union:
            kept = [arg for arg in args if not _is_response_model(arg)] or list(args)
            return Union[tuple(self(arg) for arg in kept)]  # noqa: UP007
        if origin in (dict, collections.abc.Mapping):
            return dict[self(args[0]), self(args[1])] if args else dict[str, Any]  # type: ignore[misc]
        if origin in (typing.Literal, te.Literal):
            return tp
        try:
            return origin[tuple(self(arg) for arg in args)]
        except TypeError:
            return tp

    def typeddict(self, tp: Any) -> Any:
        key = id(tp)
        if key in self.done:
            return self.done[key]
        self.done[key] = te.ForwardRef(tp.__name__)  # a guard: request params do not recurse
        hints = te.get_type_hints(tp, include_extras=True)
        default_required = set(getattr(tp, "__required_keys__", ()))
        fields: dict[str, Any] = {}
        for name, annotation in hints.items():
            required, inner = name in default_required, annotation
            origin: Any = get_origin(inner)
            while origin in _WRAPPERS:
                if origin is te.Required:
                    required = True
                elif origin is te.NotRequired:
                    required = False
                inner = get_args(inner)[0]
                origin = get_origin(inner)
            rebuilt = self(inner)
            fields[name] = te.Required[rebuilt] if required else te.NotRequired[rebuilt]
        typed_dict: Any = te.TypedDict  # named at run time: mypy types only a literal name
        strict = typed_dict(tp.__name__, fields, total=False)
        strict.__module__ = tp.__module__
        strict.__pydantic_config__ = _STRICT
        self.done[key] = strict
        return strict


@functools.cache
def strict_adapter(root: Any) -> pydantic.TypeAdapter[Any]:
    """A strict ``TypeAdapter`` over an SDK type (built once per type)."""
    return pydantic.TypeAdapter(_Rebuilder()(root))


def openai_chat_body() -> pydantic.TypeAdapter[Any]:
    """A non-streaming ``POST /v1/chat/completions`` body."""
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

    return strict_adapter(CompletionCreateParamsNonStreaming)


def anthropic_body() -> pydantic.TypeAdapter[Any]:
    """A non-streaming ``POST /v1/messages`` body."""
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    return strict_adapter(MessageCreateParamsNonStreaming)
