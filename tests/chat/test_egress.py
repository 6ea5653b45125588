"""Outbound calls, written as the attack: a local 'attacker' server records what it got.

* The server's own provider keys: an agent config pointing `baseUrl` at the attacker with
  `apiKeyEnv: OPENAI_API_KEY` is refused at save (400 naming `…baseUrl`) and, written straight into
  the database, refused at call time; the attacker never sees the server's key.
* DNS rebinding: `socket.getaddrinfo` answers a public address first and 127.0.0.1 on
  any later lookup; the loopback server must get nothing.
* Addresses that are not global (carrier NAT, 6to4 / NAT64 / IPv4-mapped forms of
  loopback) are refused.

No traffic leaves loopback: the "public" address of the rebinding tests is connected through
`providers.egress.open_stream`, which the tests point at a second local server standing in for it.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import socket
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

import providers
from chat import services
from chat.models import Agent
from projects import services as project_services
from providers import egress
from tests.chat.stubs import Stub

pytestmark = pytest.mark.django_db

OPERATOR_KEY = "sk-operator-own-key-9f8e7d6c5b4a"
PUBLIC_IP = "93.184.216.34"  # global; never really connected to (see `public_stand_in`)
REPLY = {"choices": [{"message": {"content": "ok"}}]}


@pytest.fixture
def attacker():
    server = Stub()
    server.set("/v1/chat/completions", json_body=REPLY)
    server.set("/v1/messages", json_body={"content": [{"type": "text", "text": "ok"}]})
    server.set("/x", json_body={"secret": "internal"})
    yield server
    server.close()


@pytest.fixture
def operator_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPERATOR_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", OPERATOR_KEY)
    return OPERATOR_KEY


def saw_key(server: Stub) -> bool:
    return any(OPERATOR_KEY in json.dumps(seen.headers) + json.dumps(seen.json) for seen in server.requests)


def attack_task(url: str, provider: str = "openai", name: str = "OPENAI_API_KEY") -> dict:
    return {"id": "llm", "type": "llm", "provider": provider, "model": "m", "baseUrl": url, "apiKeyEnv": name}


def post_agent(client, config: dict):
    return client.post(
        "/v1/agents", data=json.dumps({"name": "x", "config": config}), content_type="application/json"
    )


# --- the server's own provider keys -----------------------------------------------------------


@pytest.mark.parametrize(
    "provider,name,suffix", [("openai", "OPENAI_API_KEY", "/v1"), ("anthropic", "ANTHROPIC_API_KEY", "")]
)
def test_an_agent_pointing_the_operators_key_at_an_attacker_is_refused_at_save(
    cast, attacker, operator_key, settings, provider, name, suffix
):
    settings.THREADLESS_PROVIDER_ENV_ALLOW = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"]  # the default
    config = {"workflow": [attack_task(attacker.url + suffix, provider, name)]}
    response = post_agent(cast.a, config)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_request"
    assert error["message"].startswith("workflow[0].baseUrl:"), error["message"]
    assert name in error["message"]
    agent = post_agent(cast.a, {"workflow": [{"id": "llm", "type": "llm", "provider": "demo"}]}).json()
    updated = cast.a.put(
        f"/v1/agents/{agent['id']}",
        data=json.dumps({"name": "x", "config": config}),
        content_type="application/json",
    )
    assert updated.status_code == 400 and updated.json()["error"]["message"].startswith(
        "workflow[0].baseUrl:"
    )
    assert attacker.requests == [] and not saw_key(attacker)


def test_an_attack_config_written_past_validation_is_refused_at_call_time(cast, attacker, operator_key):
    agent = Agent.objects.create(
        project=cast.project_a,
        name="planted",
        slug="planted",
        config={"workflow": [attack_task(attacker.url + "/v1")]},
    )
    conversation, _ = services.conversation_create(agent=agent)
    snap = services.turn_say(conversation=conversation, text="hi")
    assert snap["conversationState"] == "ERROR"
    text = snap["taskErrors"][0]["text"]
    assert "the key in OPENAI_API_KEY may only be sent to api.openai.com (https only)" in text
    assert OPERATOR_KEY not in json.dumps(snap)
    assert attacker.requests == [] and not saw_key(attacker)


def test_the_openai_key_does_not_go_to_the_anthropic_host_either(cast, operator_key):
    config = {
        "workflow": [
            {"id": "llm", "type": "llm", "provider": "anthropic", "model": "m", "apiKeyEnv": "OPENAI_API_KEY"}
        ]
    }
    response = post_agent(cast.a, config)
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("workflow[0].baseUrl:")


@pytest.mark.parametrize(
    "task",
    [
        {"provider": "openai", "apiKeyEnv": "OPENAI_API_KEY"},
        {"provider": "openai", "apiKeyEnv": "OPENAI_API_KEY", "baseUrl": "https://api.openai.com/v1"},
        {"provider": "openai", "apiKeyEnv": "OPENAI_API_KEY", "baseUrl": "https://API.OpenAI.com./v1/"},
        {"provider": "anthropic", "apiKeyEnv": "ANTHROPIC_API_KEY"},
        {"provider": "anthropic", "apiKeyEnv": "ANTHROPIC_API_KEY", "baseUrl": "https://api.anthropic.com"},
    ],
)
def test_a_bare_name_is_accepted_for_its_providers_official_host(cast, task):
    response = post_agent(cast.a, {"workflow": [{"id": "llm", "type": "llm", "model": "m", **task}]})
    assert response.status_code == 201, response.content


@pytest.mark.parametrize(
    "base_url",
    [
        "http://api.openai.com/v1",  # the official host, but in clear text
        "https://api.openai.com:8443/v1",
        "https://api.openai.com.attacker.example/v1",
        "https://attacker.example/api.openai.com/v1",
        "https://api.openai.com@attacker.example/v1",
    ],
)
def test_a_bare_name_is_refused_anywhere_else(cast, base_url):
    response = post_agent(cast.a, {"workflow": [attack_task(base_url)]})
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("workflow[0].baseUrl:")


def test_name_at_host_entries_add_hosts_and_ports(settings):
    settings.THREADLESS_PROVIDER_ENV_ALLOW = [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY@api.anthropic.com",
        "STUB_LLM_KEY@127.0.0.1",
        "LOCAL_KEY@llm.internal:8080",
        "LOCAL_KEY@[::1]:9000",
        " LOCAL_KEY@LLM2.internal. ",
    ]
    refusal = egress.provider_env_refusal
    assert egress.provider_env_names() == ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "STUB_LLM_KEY", "LOCAL_KEY"]
    assert refusal("STUB_LLM_KEY", provider="openai", base_url="http://127.0.0.1:5001/v1") is None
    assert refusal("STUB_LLM_KEY", provider="anthropic", base_url="http://127.0.0.1:6002") is None
    assert refusal("STUB_LLM_KEY", provider="openai", base_url="http://localhost:5001/v1")
    assert refusal("LOCAL_KEY", provider="openai", base_url="http://llm.internal:8080/v1") is None
    assert refusal("LOCAL_KEY", provider="openai", base_url="http://llm.internal:8081/v1")
    assert refusal("LOCAL_KEY", provider="openai", base_url="http://[::1]:9000/v1") is None
    assert refusal("LOCAL_KEY", provider="openai", base_url="https://llm2.internal/v1") is None
    assert refusal("LOCAL_KEY", provider="openai", base_url=None)  # no bare entry: not even the official host
    assert refusal("ANTHROPIC_API_KEY", provider="anthropic", base_url=None) is None
    assert refusal("OPENAI_API_KEY", provider="openai", base_url="http://127.0.0.1:5001/v1")
    assert refusal("SECRET_KEY", provider="openai", base_url=None).startswith("'SECRET_KEY' is not in")
    assert refusal("OPENAI_API_KEY", provider="demo", base_url="http://anything/") is None


def test_a_key_allowed_for_the_stub_host_reaches_it(cast, attacker, monkeypatch, settings):
    settings.THREADLESS_PROVIDER_ENV_ALLOW = ["OPENAI_API_KEY", "STUB_LLM_KEY@127.0.0.1"]
    monkeypatch.setenv("STUB_LLM_KEY", "sk-stub-key-for-the-local-model")
    response = post_agent(cast.a, {"workflow": [attack_task(attacker.url + "/v1", name="STUB_LLM_KEY")]})
    assert response.status_code == 201, response.content
    agent = Agent.objects.get(pk=response.json()["id"])
    conversation, _ = services.conversation_create(agent=agent)
    snap = services.turn_say(conversation=conversation, text="hi")
    assert snap["output"] == [{"type": "text", "text": "ok"}]
    assert attacker.requests[-1].headers["Authorization"] == "Bearer sk-stub-key-for-the-local-model"


def test_a_secret_store_key_goes_to_any_allowed_egress_host(cast, attacker, settings):
    settings.THREADLESS_PROVIDER_ENV_ALLOW = ["OPENAI_API_KEY"]
    project_services.secret_set(project=cast.project_a, name="mine", value="sk-tenant-own-key-123456")
    config = {
        "workflow": [
            {
                "id": "llm",
                "type": "llm",
                "provider": "openai",
                "model": "m",
                "baseUrl": attacker.url + "/v1",
                "apiKeySecret": "mine",
            }
        ]
    }
    agent = services.agent_create(project=cast.project_a, name="own key", config=config)
    conversation, _ = services.conversation_create(agent=agent)
    services.turn_say(conversation=conversation, text="hi")
    assert attacker.requests[-1].headers["Authorization"] == "Bearer sk-tenant-own-key-123456"


def test_the_providers_default_urls_are_the_official_hosts():
    from providers import anthropic, openai

    for module, provider in ((openai, "openai"), (anthropic, "anthropic")):
        assert httpx.URL(module.DEFAULT_BASE_URL).host == egress.OFFICIAL_HOSTS[provider]
        assert httpx.URL(module.DEFAULT_BASE_URL).scheme == "https"


# --- addresses that are not global -------------------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "100.100.100.200",  # a cloud metadata service in carrier-grade NAT space
        "100.64.0.1",
        "127.0.0.1",
        "10.0.0.5",
        "169.254.169.254",
        "0.0.0.0",
        "224.0.0.1",
        "240.0.0.1",
        "2002:7f00:1::",  # 6to4 around 127.0.0.1
        "2002:a00:5::",  # 6to4 around 10.0.0.5
        "64:ff9b::7f00:1",  # NAT64 around 127.0.0.1
        "64:ff9b::a9fe:a9fe",  # NAT64 around 169.254.169.254
        "64:ff9b:1::808:808",  # local-use NAT64
        "::ffff:127.0.0.1",
        "::ffff:100.100.100.200",  # IPv4-mapped
        "::7f00:1",  # IPv4-compatible (deprecated)
        "::1",
        "fe80::1",
        "fd00::1",
        "ff02::1",
        "fec0::1",
        "feff::1",  # site-local (fec0::/10, deprecated but still routed inside some networks)
    ],
)
def test_non_global_addresses_are_not_public(address):
    assert egress.address_is_public(ipaddress.ip_address(address)) is False


@pytest.mark.parametrize(
    "address",
    ["8.8.8.8", PUBLIC_IP, "2606:4700:4700::1111", "::ffff:8.8.8.8", "2002:808:808::", "64:ff9b::808:808"],
)
def test_global_addresses_are_public(address):
    assert egress.address_is_public(ipaddress.ip_address(address)) is True


@pytest.mark.parametrize(
    "address", ["100.100.100.200", "2002:7f00:1::", "64:ff9b::7f00:1", "::ffff:127.0.0.1", "fec0::1"]
)
def test_a_name_resolving_to_a_disguised_internal_address_is_refused_before_connecting(
    address, cast, monkeypatch, settings
):
    settings.THREADLESS_EGRESS_ALLOW = []
    connects: list = []
    monkeypatch.setattr(egress, "resolve", lambda host, port: [address])
    monkeypatch.setattr(egress, "open_stream", lambda *a, **k: connects.append(a) or pytest.fail("connected"))
    config = {
        "workflow": [
            {"id": "meta", "type": "http_call", "request": {"url": "http://metadata.example/latest"}}
        ]
    }
    agent = services.agent_create(project=cast.project_a, name="probe", config=config)
    conversation, _ = services.conversation_create(agent=agent)
    snap = services.turn_say(conversation=conversation, text="hi")
    assert "egress to metadata.example is not allowed" in snap["taskErrors"][0]["text"]
    assert connects == []


def test_the_allow_list_still_admits_listed_hosts_and_cidrs(settings):
    settings.THREADLESS_EGRESS_ALLOW = ["127.0.0.1", "100.64.0.0/10", "models.internal"]
    assert egress.egress_check("http://127.0.0.1:9/x") == [ipaddress.ip_address("127.0.0.1")]
    assert egress.egress_check("http://100.100.100.200/") == [ipaddress.ip_address("100.100.100.200")]
    assert egress.egress_check("http://[::ffff:127.0.0.1]:9/") == [ipaddress.ip_address("::ffff:127.0.0.1")]
    with pytest.raises(egress.EgressRefused):
        egress.egress_check("http://10.0.0.5/")
    with pytest.raises(egress.EgressRefused):
        egress.egress_check("http://[::1]/")
    with pytest.raises(egress.EgressRefused):
        egress.egress_check("ftp://127.0.0.1/")


# --- DNS rebinding ----------------------------------------------------------------------------


class _Seen(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - http.server's naming
        self.server.seen.append({"path": self.path, "host": self.headers.get("Host")})
        body = b'{"where": "public"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, *args):
        pass


def _serve(server: ThreadingHTTPServer) -> ThreadingHTTPServer:
    server.seen = []
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def public_stand_in(monkeypatch):
    """A local server standing in for the host at PUBLIC_IP: connections the egress code opens to
    PUBLIC_IP go here instead (anything else is refused), so nothing leaves loopback."""
    server = _serve(ThreadingHTTPServer(("127.0.0.1", 0), _Seen))
    server.connects = []
    real = egress.open_stream

    def open_stream(address, port, **kwargs):
        server.connects.append((address, port))
        if address != PUBLIC_IP:
            import httpcore

            raise httpcore.ConnectError(f"test: no connection to {address} from this test")
        return real("127.0.0.1", server.server_address[1], **kwargs)

    monkeypatch.setattr(egress, "open_stream", open_stream)
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def rebinding_dns(monkeypatch):
    """`socket.getaddrinfo` for `rebind.example` as a rebinding attacker's DNS (TTL 0) answers:
    PUBLIC_IP, then 127.0.0.1, then PUBLIC_IP again, … — so code that resolves to check and
    resolves again to connect always connects to loopback."""
    real = socket.getaddrinfo
    lookups: list[str] = []

    def getaddrinfo(host, port, *args, **kwargs):
        if host != "rebind.example":
            return real(host, port, *args, **kwargs)
        lookups.append(host)
        address = PUBLIC_IP if len(lookups) % 2 else "127.0.0.1"
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return lookups


def test_an_http_call_connects_to_the_address_it_checked_not_a_rebound_one(
    cast, attacker, public_stand_in, rebinding_dns, settings
):
    settings.THREADLESS_EGRESS_ALLOW = []
    url = f"http://rebind.example:{attacker.port}/x"
    config = {
        "workflow": [
            {"id": "fetch", "type": "http_call", "request": {"url": url}, "storeAs": "fetched"},
            {"id": "llm", "type": "llm", "provider": "demo"},
        ]
    }
    agent = services.agent_create(project=cast.project_a, name="rebind", config=config)
    conversation, _ = services.conversation_create(agent=agent)
    outcomes = []
    for _ in range(4):
        snap = services.turn_say(conversation=conversation, text="hi")
        errors = [e["text"] for e in snap["taskErrors"]]
        assert errors == [] or "egress to rebind.example is not allowed" in errors[0], errors
        outcomes.append("public" if not errors else "refused")
    # One lookup per connection: the public answers were used, the loopback answers refused.
    assert outcomes == ["public", "refused", "public", "refused"] and len(rebinding_dns) == 4
    assert attacker.requests == []  # the loopback server was never reached
    assert public_stand_in.seen[0] == {"path": "/x", "host": f"rebind.example:{attacker.port}"}
    assert {c[0] for c in public_stand_in.connects} == {PUBLIC_IP}


def test_an_llm_call_connects_to_the_address_it_checked_not_a_rebound_one(
    cast, attacker, public_stand_in, rebinding_dns, settings
):
    settings.THREADLESS_EGRESS_ALLOW = []
    reasons = []
    for _ in range(4):
        with pytest.raises(providers.ProviderError) as caught:  # the stand-in does not speak chat completions
            providers.complete(
                provider="openai",
                model="m",
                base_url=f"http://rebind.example:{attacker.port}/v1",
                api_key="sk-tenant",
                messages=[{"role": "user", "content": "hi"}],
            )
        reasons.append(caught.value.reason)
    assert [r.startswith("egress to rebind.example is not allowed") for r in reasons] == [
        False,
        True,
        False,
        True,
    ]
    assert attacker.requests == []
    assert [s["path"] for s in public_stand_in.seen] == ["/v1/chat/completions"] * 2
    assert {c[0] for c in public_stand_in.connects} == {PUBLIC_IP}


def test_an_embeddings_call_connects_to_the_address_it_checked_not_a_rebound_one(
    attacker, public_stand_in, rebinding_dns, settings
):
    from providers.embeddings import EmbeddingFailed, OpenAIProvider

    settings.THREADLESS_EGRESS_ALLOW = []
    provider = OpenAIProvider(
        model="m", base_url=f"http://rebind.example:{attacker.port}/v1", api_key="sk-tenant"
    )
    reasons = []
    for _ in range(4):
        with pytest.raises(EmbeddingFailed) as caught:  # the stand-in does not speak embeddings
            provider.embed(["what is my dog called?"])
        reasons.append(str(caught.value))
    assert [r.startswith("egress to rebind.example is not allowed") for r in reasons] == [
        False,
        True,
        False,
        True,
    ]
    assert attacker.requests == []
    assert [s["path"] for s in public_stand_in.seen] == ["/v1/embeddings"] * 2
    assert {c[0] for c in public_stand_in.connects} == {PUBLIC_IP}


def test_one_answer_mixing_public_and_loopback_addresses_is_refused(cast, attacker, monkeypatch, settings):
    settings.THREADLESS_EGRESS_ALLOW = []
    monkeypatch.setattr(egress, "resolve", lambda host, port: [PUBLIC_IP, "127.0.0.1"])
    with pytest.raises(providers.ProviderError) as caught:
        providers.complete(
            provider="openai",
            model="m",
            base_url=f"http://mixed.example:{attacker.port}/v1",
            api_key="sk-tenant",
            messages=[{"role": "user", "content": "hi"}],
        )
    assert "egress to mixed.example is not allowed" in caught.value.reason
    assert attacker.requests == []


def test_each_outbound_connection_resolves_its_host_exactly_once(attacker, monkeypatch, settings):
    settings.THREADLESS_EGRESS_ALLOW = ["127.0.0.1"]
    real = socket.getaddrinfo
    lookups: list[str] = []

    def counting(host, *args, **kwargs):
        lookups.append(host)
        return real("127.0.0.1" if host == "once.example" else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", counting)
    with egress.egress_client() as client:
        response = client.get(f"http://once.example:{attacker.port}/x")
    assert response.status_code == 200
    assert lookups.count("once.example") == 1
    assert attacker.requests[-1].headers["Host"] == f"once.example:{attacker.port}"


# --- TLS: the server name stays the hostname ----------------------------------------------------


def _certificates(tmp_path, hostname: str):
    """A throwaway CA and a server certificate for `hostname` (no IP address in it)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "threadless test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostname)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(hostname)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    ca_file, cert_file, key_file = tmp_path / "ca.pem", tmp_path / "cert.pem", tmp_path / "key.pem"
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return ca_file, cert_file, key_file


@pytest.fixture
def tls_stand_in(tmp_path, monkeypatch):
    """An HTTPS server on loopback with a certificate for `secure.example` only, standing in for
    PUBLIC_IP; it records the TLS server name (SNI) each client asked for."""
    ca_file, cert_file, key_file = _certificates(tmp_path, "secure.example")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Seen)
    server.names = []
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    context.sni_callback = lambda sock, name, ctx: server.names.append(name)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    _serve(server)
    real = egress.open_stream

    def open_stream(address, port, **kwargs):
        assert address == PUBLIC_IP, address
        return real("127.0.0.1", server.server_address[1], **kwargs)

    monkeypatch.setattr(egress, "open_stream", open_stream)
    monkeypatch.setattr(egress, "resolve", lambda host, port: [PUBLIC_IP])
    server.ca = ssl.create_default_context(cafile=str(ca_file))
    yield server
    server.shutdown()
    server.server_close()


def test_tls_to_a_pinned_address_keeps_the_hostname_for_sni_and_the_certificate(tls_stand_in, settings):
    settings.THREADLESS_EGRESS_ALLOW = []
    with egress.egress_client(verify=tls_stand_in.ca) as client:
        response = client.get("https://secure.example/hello")
    assert response.status_code == 200 and response.json() == {"where": "public"}
    assert tls_stand_in.names == ["secure.example"]
    assert tls_stand_in.seen == [{"path": "/hello", "host": "secure.example"}]


def test_tls_still_refuses_a_certificate_for_another_name(tls_stand_in, settings):
    settings.THREADLESS_EGRESS_ALLOW = []
    with egress.egress_client(verify=tls_stand_in.ca) as client, pytest.raises(httpx.ConnectError) as caught:
        client.get("https://other.example/hello")
    assert "certificate" in str(caught.value).lower()
    assert tls_stand_in.seen == []


# --- the setting itself -----------------------------------------------------------------------


def test_a_malformed_provider_env_allow_entry_stops_the_process_at_start(monkeypatch):
    from django.core.exceptions import ImproperlyConfigured

    from threadless_site.env import envkeylist

    monkeypatch.setenv(
        "TL_TEST_ALLOW",
        "OPENAI_API_KEY, ANTHROPIC_API_KEY@api.anthropic.com,"
        "STUB_LLM_KEY@127.0.0.1:8080,V6_KEY@[::1]:9,PATH_KEY@gw.example/v1/",
    )
    assert envkeylist("TL_TEST_ALLOW") == [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY@api.anthropic.com",
        "STUB_LLM_KEY@127.0.0.1:8080",
        "V6_KEY@[::1]:9",
        "PATH_KEY@gw.example/v1/",
    ]
    for bad in (
        "KEY@",
        "KEY@host:port",
        "KEY@http://host",
        "KEY@host/../x",
        "KEY@host/a?b",
        "KEY@host//x",
        "KEY@host/%2e",
        "1KEY",
        "KEY@a@b",
        "KEY@" + "a-" * 200,
    ):
        monkeypatch.setenv("TL_TEST_ALLOW", bad)
        with pytest.raises(ImproperlyConfigured):
            envkeylist("TL_TEST_ALLOW")


# --- every outbound call goes through the pinned pool ------------------------------------------

APP_PACKAGES = ("common", "projects", "providers", "memories", "chat", "proxy", "console", "threadless_site")
HTTPX_CALLS = {"get", "post", "put", "patch", "delete", "head", "request", "stream", "Client", "AsyncClient"}


def _pinned(call) -> bool:
    """A client built with its own (pinned) transport and without the environment's proxies."""
    keywords = {k.arg: k.value for k in call.keywords}
    trust_env = keywords.get("trust_env")
    return "transport" in keywords and getattr(trust_env, "value", True) is False


def test_no_app_module_calls_httpx_past_the_pinned_pool():
    """A direct `httpx.post(...)`, or a client on httpx's own transport, resolves the host again after
    the egress check and honours proxy variables: the app calls out through the pinned pools
    (providers.egress, proxy.upstream) only."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    found = []
    for package in APP_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
                func = node.func if isinstance(node, ast.Call) else None
                if (
                    isinstance(func, ast.Attribute)
                    and isinstance(func.value, ast.Name)
                    and func.value.id == "httpx"
                    and func.attr in HTTPX_CALLS
                    and not (func.attr in ("Client", "AsyncClient") and _pinned(node))
                ):
                    found.append(f"{path.relative_to(root)}:{node.lineno} httpx.{func.attr}")
    assert found == []


def test_an_agent_url_the_egress_policy_refuses_is_400_at_save_naming_the_value_to_allow(cast, settings):
    settings.THREADLESS_EGRESS_ALLOW = []
    fetch = {"id": "fetch", "type": "http_call", "request": {"url": "http://10.1.2.3:8080/{{ input }}"}}
    refused = post_agent(cast.a, {"workflow": [fetch]})
    assert refused.status_code == 400
    assert refused.json()["error"]["message"] == (
        "workflow[0].request.url: egress to 10.1.2.3 is not allowed; to allow it, an operator adds "
        "10.1.2.3 to THREADLESS_EGRESS_ALLOW (or on the console's Egress page)"
    )
    model = {
        "id": "llm",
        "type": "llm",
        "provider": "openai",
        "model": "m",
        "baseUrl": "http://localhost:1/v1",
    }
    assert (
        post_agent(cast.a, {"workflow": [model]})
        .json()["error"]["message"]
        .startswith("workflow[0].baseUrl: egress to localhost is not allowed")
    )
    settings.THREADLESS_EGRESS_ALLOW = ["10.0.0.0/8"]
    assert post_agent(cast.a, {"workflow": [fetch]}).status_code == 201


def test_a_name_is_not_looked_up_at_save_so_a_save_tells_nothing_about_internal_dns(
    cast, settings, monkeypatch
):
    settings.THREADLESS_EGRESS_ALLOW = []
    monkeypatch.setattr(egress, "resolve", lambda host, port: pytest.fail(f"looked up {host} at save"))
    fetch = {"id": "fetch", "type": "http_call", "request": {"url": "http://db.internal:5432/x"}}
    assert post_agent(cast.a, {"workflow": [fetch]}).status_code == 201  # refused when it is called
