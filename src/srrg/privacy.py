"""Privacy guard: nothing leaves the machine unless the config says so, and keys stay in the environment.

Reports under a data-use agreement (MIMIC-CXR) must not reach a third-party API by accident: an
endpoint that is not on this host is refused unless `llm.allow_remote: true`.

"On this host" is decided on addresses (docs/judges.md): `localhost` and loopback literals
(127.0.0.0/8, ::1) count without a lookup; any other name is resolved once per process and counts
only when every address it resolves to is loopback. The transport then connects to exactly those
addresses (srrg.llm.transport), so a later, different answer of the resolver is never used.

It reads settings only (srrg.settings.llm), below the LLM client: the workflow's pre-check
(srrg.config_tree) asks it whether an endpoint may be used without loading the client.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from functools import lru_cache
from urllib.parse import urlsplit

from srrg.errors import UserError
from srrg.settings.llm import LLMConfig

OPENAI_DEFAULT_URL = "https://api.openai.com/v1"


class PrivacyError(UserError, RuntimeError):
    """Raised before any request is sent to an endpoint the config did not allow: a setting to
    change, so a command reports it in one line with exit 2 (srrg.errors.UserError)."""


_UNPRINTABLE = re.compile(r"[\x00-\x20\x7f-\x9f]")  # whitespace and control characters: no URL holds them


LOCALHOST = ("127.0.0.1", "::1")  # what `localhost` stands for, without asking a resolver


def _loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


@lru_cache(maxsize=64)
def _resolved(host: str) -> tuple[str, ...]:
    """Every address a host name resolves to (once per process: later checks see the same answer)."""
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return ()
    return tuple(dict.fromkeys(str(info[4][0]) for info in infos))


def local_addresses(url: str) -> tuple[str, ...] | None:
    """The loopback addresses an endpoint's host stands for, or None when it is not on this host
    (a name that does not resolve, or resolves to any address that is not loopback)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return LOCALHOST
    try:
        return (host,) if ipaddress.ip_address(host).is_loopback else None
    except ValueError:
        pass
    if not host:
        return None
    addresses = _resolved(host)
    return addresses if addresses and all(_loopback(a) for a in addresses) else None


def is_local_url(url: str) -> bool:
    """True for endpoints on this host only (local_addresses)."""
    return local_addresses(url) is not None


def connection_pins(url: str) -> dict[str, tuple[str, ...]] | None:
    """host -> the checked addresses the transport may connect to; None for a remote endpoint."""
    addresses = local_addresses(url)
    return None if addresses is None else {urlsplit(url).hostname or "": addresses}


def check_endpoint(cfg: LLMConfig) -> str:
    """The endpoint URL the openai backend may use, or PrivacyError when it is remote and not allowed."""
    url = cfg.base_url or OPENAI_DEFAULT_URL
    bad = _UNPRINTABLE.search(url)
    if bad:
        raise UserError(
            f"llm.base_url {url!r} holds {bad.group()!r} at position {bad.start()}; "
            "a URL has no spaces, tabs or line breaks (a stray one from a copied value?)"
        )
    if not is_local_url(url) and not cfg.allow_remote:
        raise PrivacyError(
            f"llm endpoint {url} is not on this host; set llm.allow_remote: true to send the declared "
            f"prompt fields there (check your data-use agreement first)"
        )
    return url


def api_key(cfg: LLMConfig) -> str:
    """The key from the environment variable named in the config.

    Loopback servers (llama.cpp, vLLM, Ollama) usually need no key, so an unset variable gives a
    placeholder there; a remote endpoint without a key is an error that names the variable.
    """
    value = os.environ.get(cfg.api_key_env, "")
    if value:
        return value
    if is_local_url(cfg.base_url or OPENAI_DEFAULT_URL):
        return "no-key"
    raise PrivacyError(f"environment variable {cfg.api_key_env} (llm.api_key_env) is not set")


def redact(text: str, secret: str) -> str:
    """Remove a secret from an error message before it is logged or stored."""
    return text.replace(secret, "***") if secret and len(secret) > 3 else text


def check_usable(cfg: LLMConfig, user: str) -> None:
    """What `user` (e.g. "normalize.method llm") needs of its LLM, checked without loading a model:
    a backend with a model, and for an endpoint one the privacy guard allows (llm.allow_remote for
    a remote one). ValueError saying what to set."""
    if cfg.backend == "rules":
        raise ValueError(f"{user} needs an LLM, but its llm.backend is rules; set backend openai or local")
    if cfg.backend == "openai":
        try:
            check_endpoint(cfg)
        except PrivacyError as err:
            raise ValueError(f"{user}: {err}") from None
