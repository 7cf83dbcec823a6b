"""Which file URLs a server may fetch, or hand to a provider, on a client's behalf.

`is_public_web_url` is the test `sanitize_untrusted` applies to a file
part's URL: ``http(s)`` whose host is a public DNS name or a globally routable address. It reads
the host the way a WHATWG URL parser (browsers, and the fetchers that follow them) and
``inet_aton`` do, so ``http://2130706433/``, ``http://0x7f.1/``, ``http://127.1/`` and
``http://[::ffff:127.0.0.1]/`` are all seen as loopback. Text that parsers read differently (a
backslash, whitespace or a control character anywhere, ``%`` or non-ASCII in the host, more
than one ``@``) is refused rather than guessed at: a check that reads another host than the
fetcher is no check.

Nothing is resolved: a public name may still resolve to a private address (``*.nip.io``, DNS
rebinding), so the code that fetches needs its own guard on the address it connects to.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Final

__all__ = ["is_public_web_url", "is_web_url"]

_Address = ipaddress.IPv4Address | ipaddress.IPv6Address

_SCHEME: Final = re.compile(r"https?://", re.IGNORECASE)
# WHATWG parsers drop tabs and newlines anywhere and read "\" as "/"; other parsers do neither.
_AMBIGUOUS: Final = re.compile(r"[\x00-\x20\x7f\\]")
_USERINFO: Final = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:%]*")
_HOST_PORT: Final = re.compile(
    r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._]+)(?::(?P<port>[0-9]{0,5}))?"
)
# A last label that makes the whole host an IPv4 address (the WHATWG "ends in a number" rule).
_NUMBER: Final = re.compile(r"[0-9]+|0[xX][0-9A-Fa-f]*")
# Names that resolve to this machine or a private network: RFC 6761 (localhost), RFC 6762
# (mDNS .local), RFC 8375 (home.arpa), ICANN's private-use .internal (metadata.google.internal),
# the .arpa reverse zones, and suffixes routers and intranets use that are no public TLD.
_PRIVATE_SUFFIXES: Final = tuple(
    "." + name
    for name in ("localhost", "local", "internal", "arpa", "localdomain", "lan", "home", "corp")
)
_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")


def is_web_url(url: str) -> bool:
    """Whether ``url`` starts with ``http://`` or ``https://`` (any case)."""
    return _SCHEME.match(url) is not None


def is_public_web_url(url: str) -> bool:
    """Whether ``url`` is ``http(s)`` with a public host, read without ambiguity.

    False for loopback, private, link-local, shared, unspecified, multicast and reserved
    addresses in any notation (IPv4 as 1 to 4 decimal, octal or hex parts; IPv6 with IPv4
    embedded by mapping, NAT64 or 6to4), for ``localhost`` and names under the private-use
    suffixes, for names without a dot (the resolver's search list makes them local), and for
    any URL whose host two parsers could read differently.
    """
    if not is_web_url(url) or _AMBIGUOUS.search(url):
        return False
    rest = url[url.index("://") + 3 :]
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    userinfo, at, host_port = authority.rpartition("@")
    if at and not _USERINFO.fullmatch(userinfo):
        return False
    match = _HOST_PORT.fullmatch(host_port)
    if match is None or (match["port"] and int(match["port"]) > 65535):
        return False
    host = match["host"].lower()
    if host.startswith("["):
        try:
            return _is_public_address(ipaddress.IPv6Address(host[1:-1]))
        except ValueError:
            return False
    return _is_public_name(host)


def _is_public_name(host: str) -> bool:
    labels = host.removesuffix(".").split(".")
    if not all(labels):
        return False
    if _NUMBER.fullmatch(labels[-1]):
        address = _ipv4(labels)
        return address is not None and _is_public_address(address)
    name = ".".join(labels)
    return len(labels) > 1 and not ("." + name).endswith(_PRIVATE_SUFFIXES)


def _ipv4(labels: list[str]) -> ipaddress.IPv4Address | None:
    """The address a host of 1 to 4 numeric parts names (``127.1``, ``0x7f.0.0.1``, ``0177.1``),
    or ``None`` when the parts are no address (a URL parser refuses such a URL)."""
    if len(labels) > 4:
        return None
    numbers: list[int] = []
    for label in labels:
        if label[:2] in ("0x", "0X"):
            digits, base = label[2:] or "0", 16
        elif len(label) > 1 and label.startswith("0"):
            digits, base = label[1:], 8
        else:
            digits, base = label, 10
        try:
            numbers.append(int(digits, base))
        except ValueError:
            return None
    *leading, last = numbers
    if any(number > 255 for number in leading) or last >= 256 ** (5 - len(numbers)):
        return None
    value = last
    for position, number in enumerate(leading):
        value += number << (8 * (3 - position))
    return ipaddress.IPv4Address(value)


def _is_public_address(address: _Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:  # the IPv4 address itself is what gets connected to
            return _is_public_address(address.ipv4_mapped)
        embedded = address.sixtofour
        if address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if address.is_site_local or (embedded is not None and not _is_public_address(embedded)):
            return False
    # Several flags on purpose: Python versions draw is_private and is_global differently.
    return address.is_global and not (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
    )
