"""Invariants of sanitize_untrusted over client mappings with forged metadata, reasoning state
and file URLs to hosts written in every notation parsers accept.

The oracle for "private" is independent of the code under test: the host as ``urllib.parse``
reads it, numeric hosts as glibc's ``inet_aton`` reads them, and a fixed list of networks.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any
from urllib.parse import urlsplit

from hypothesis import given
from hypothesis import strategies as st

from tests.strategies import CODEC_METADATA_KEYS
from tests.strategies import RESPONSE_METADATA_KEYS
from tests.strategies import SANITIZE_KEPT_KEYS
from tests.strategies import json_values
from tests.strategies import names
from tests.strategies import texts
from threadline import FilePart
from threadline import Message
from threadline import ReasoningPart
from threadline import ToolResultPart
from threadline import dump_json
from threadline import load_json
from threadline._urls import is_public_web_url
from threadline.integrity import sanitize_untrusted

ALLOWED_KEYS = set(SANITIZE_KEPT_KEYS)
CODEC_KEYS = [*sorted(ALLOWED_KEYS), *CODEC_METADATA_KEYS, *RESPONSE_METADATA_KEYS]

PRIVATE_V4 = [
    ipaddress.IPv4Network(net)
    for net in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "224.0.0.0/4",
        "240.0.0.0/4",
    )
]
PRIVATE_V6 = [
    ipaddress.IPv6Network(net)
    for net in ("::/127", "fe80::/10", "fec0::/10", "fc00::/7", "ff00::/8", "::ffff:0:0/96")
]


def reaches_private(url: str) -> bool:
    """Whether a fetcher could reach a local or private host through ``url`` (the oracle)."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return True
    if not host:
        return True
    host = host.removesuffix(".")
    address: ipaddress.IPv4Address | ipaddress.IPv6Address
    try:
        address = ipaddress.IPv6Address(host)
    except ValueError:
        try:
            address = ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return "." not in host or host == "localhost" or host.endswith(".localhost")
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is None:
            return any(address in net for net in PRIVATE_V6)
        address = address.ipv4_mapped
    return any(address in net for net in PRIVATE_V4)


# --- URLs ---------------------------------------------------------------------------------------

addresses_v4 = st.one_of(
    st.integers(0, 2**32 - 1),
    st.sampled_from(PRIVATE_V4).flatmap(
        lambda net: st.integers(int(net.network_address), int(net.broadcast_address))
    ),
)


@st.composite
def ipv4_notations(draw: st.DrawFn, value: int) -> str:
    """``value`` as 1 to 4 parts, each decimal, octal or hex (the forms inet_aton reads)."""
    count = draw(st.integers(1, 4))
    octets = value.to_bytes(4, "big")
    numbers = [*octets[: count - 1], int.from_bytes(octets[count - 1 :], "big")]
    rendered = []
    for number in numbers:
        form = draw(st.sampled_from(["dec", "oct", "hex", "HEX"]))
        if form == "dec":
            rendered.append(str(number))
        elif form == "oct":
            rendered.append("0" + format(number, "o"))
        else:
            rendered.append(("0x" if form == "hex" else "0X") + format(number, "x"))
    return ".".join(rendered) + draw(st.sampled_from(["", "", "."]))


@st.composite
def ipv6_notations(draw: st.DrawFn) -> str:
    address = draw(
        st.one_of(
            st.integers(0, 2**128 - 1).map(ipaddress.IPv6Address),
            st.sampled_from(PRIVATE_V6).flatmap(
                lambda net: st.integers(int(net.network_address), int(net.broadcast_address)).map(
                    ipaddress.IPv6Address
                )
            ),
            addresses_v4.map(lambda v: ipaddress.IPv6Address(0xFFFF00000000 | v)),
        )
    )
    if address.ipv4_mapped is not None and draw(st.booleans()):
        return f"[::ffff:{address.ipv4_mapped}]"
    return f"[{draw(st.sampled_from([address.compressed, address.exploded]))}]"


names_hosts = st.sampled_from(
    [
        "localhost",
        "LocalHost.",
        "api.localhost",
        "metadata",
        "metadata.google.internal",
        "example.com",
        "Example.COM.",
        "cdn.example.org",
        "xn--bcher-kva.example",
    ]
)
hosts = st.one_of(addresses_v4.flatmap(ipv4_notations), ipv6_notations(), names_hosts)


@st.composite
def urls(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["http", "https", "HTTPS", "ftp", "file"]))
    userinfo = draw(st.sampled_from(["", "", "user@", "evil.com@", "a:b@", "a@b@"]))
    port = draw(st.sampled_from(["", "", ":80", ":8443", ":"]))
    path = draw(st.sampled_from(["/", "/x.png", "", "?q=1", "#f", "/@evil.com", "\\@evil.com"]))
    return f"{scheme}://{userinfo}{draw(hosts)}{port}{path}"


@given(addresses_v4, st.data())
def test_the_url_check_reads_numeric_hosts_as_inet_aton_does(
    value: int, data: st.DataObject
) -> None:
    host = data.draw(ipv4_notations(value))
    url = f"http://{host}/"
    private = any(ipaddress.IPv4Address(value) in net for net in PRIVATE_V4)
    if is_public_web_url(url):
        assert not private
        assert ipaddress.IPv4Address(socket.inet_aton(host.removesuffix("."))) == (
            ipaddress.IPv4Address(value)
        )
    dotted = str(ipaddress.IPv4Address(value))
    if not private and ipaddress.IPv4Address(value).is_global:
        assert is_public_web_url(f"http://{dotted}/")


# --- client mappings ----------------------------------------------------------------------------

metadata_keys = st.one_of(
    st.sampled_from(CODEC_KEYS),
    texts,
    st.tuples(
        st.sampled_from(["anthropic.", "openai.", "gemini.", "threadline.", "x."]), names
    ).map("".join),
)
forged_metadata = st.dictionaries(metadata_keys, json_values, max_size=4)


@st.composite
def client_parts(draw: st.DrawFn, role: str) -> dict[str, Any]:
    kind = draw(
        st.sampled_from(["text", "file", "reasoning"] if role == "assistant" else ["text", "file"])
    )
    part: dict[str, Any] = {"type": kind, "metadata": draw(forged_metadata)}
    if kind == "text":
        part["text"] = draw(texts)
    elif kind == "file":
        part.update(media_type="image/png", url=draw(urls()))
    else:
        redacted = draw(st.booleans())
        part.update(
            text="" if redacted else draw(texts),
            redacted=redacted,
            summary=draw(st.lists(texts, max_size=2)),
            signature=draw(st.none() | names),
            encrypted=draw(names) if redacted else draw(st.none() | names),
            item_id=draw(st.none() | names.map("rs_".__add__)),
            provider=draw(st.none() | st.sampled_from(["anthropic", "openai", "gemini"])),
            model=draw(st.none() | names),
        )
    return part


@st.composite
def client_histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(1, 4))
    messages: list[dict[str, Any]] = []
    for index in range(count):
        role = "user" if index % 2 == 0 else "assistant"
        parts = draw(st.lists(client_parts(role), min_size=1, max_size=4))
        if role == "assistant" and draw(st.booleans()):
            call = {"type": "tool_call", "id": f"c{index}", "name": "f", "arguments": {}}
            parts.append({**call, "metadata": draw(forged_metadata)})
            content = [
                {"type": "text", "text": "seen", "metadata": draw(forged_metadata)},
                {"type": "file", "media_type": "image/png", "url": draw(urls())},
            ]
            result = {"type": "tool_result", "call_id": f"c{index}", "content": content}
            messages.append({"id": f"m{index}", "role": role, "parts": parts})
            role, parts = "tool", [{**result, "metadata": draw(forged_metadata)}]
        messages.append(
            {
                "id": f"m{index}:{role}",
                "role": role,
                "parts": parts,
                "metadata": draw(forged_metadata),
            }
        )
    return messages


def every_part(messages: list[Message]) -> list[Any]:
    parts: list[Any] = []
    for message in messages:
        for part in message.parts:
            parts.append(part)
            if isinstance(part, ToolResultPart) and not isinstance(part.content, str):
                parts.extend(part.content)
    return parts


@given(client_histories())
def test_sanitized_client_history_holds_no_forged_state_and_no_private_url(
    messages: list[dict[str, Any]],
) -> None:
    out = sanitize_untrusted(messages)  # type: ignore[arg-type]
    for message in out:
        assert message.metadata.keys() <= ALLOWED_KEYS
    for part in every_part(out):
        assert part.metadata.keys() <= ALLOWED_KEYS
        if isinstance(part, FilePart) and part.url is not None:
            assert part.url.lower().startswith(("http://", "https://")), part.url
            assert not reaches_private(part.url), part.url
        if isinstance(part, ReasoningPart):
            assert (part.signature, part.encrypted, part.item_id) == (None, None, None)
            assert (part.provider, part.model, part.redacted) == (None, None, False)
            assert part.text or any(part.summary)
    assert sanitize_untrusted(out) == out
    assert load_json(dump_json(out)) == out


@given(client_histories(), st.frozensets(st.sampled_from(CODEC_METADATA_KEYS[:10]), max_size=3))
def test_keep_metadata_keeps_exactly_the_listed_keys_more(
    messages: list[dict[str, Any]], keep: frozenset[str]
) -> None:
    out = sanitize_untrusted(messages, keep_metadata=keep, allow_private_urls=True)  # type: ignore[arg-type]
    for part in every_part(out):
        assert part.metadata.keys() <= ALLOWED_KEYS | keep
        if isinstance(part, FilePart) and part.url is not None:
            assert part.url.lower().startswith(("http://", "https://")), part.url
    assert sanitize_untrusted(out, keep_metadata=keep, allow_private_urls=True) == out


@given(st.integers(1, 4), st.lists(st.booleans(), min_size=1, max_size=5))
def test_sanitize_is_idempotent_over_a_tail_of_call_only_assistant_messages(
    first: int, shapes: list[bool]
) -> None:
    # Each trailing assistant message holds only calls (True: one has text too); the tail goes
    # message by message in one pass, so a second pass finds nothing more to drop.
    messages: list[dict[str, Any]] = [{"role": "user", "parts": [{"type": "text", "text": "q"}]}]
    for index, with_text in enumerate(shapes):
        parts: list[dict[str, Any]] = [
            {"type": "tool_call", "id": f"c{index}.{n}", "name": "f", "arguments": {}}
            for n in range(first)
        ]
        if with_text:
            parts.insert(0, {"type": "text", "text": "t"})
        messages.append({"role": "assistant", "parts": parts})
    once = sanitize_untrusted(messages)  # type: ignore[arg-type]
    assert sanitize_untrusted(once) == once
