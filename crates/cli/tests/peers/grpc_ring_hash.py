"""The grpcio peer of the gRPC ring_hash compatibility test.

Usage: python grpc_ring_hash.py CONFIG [STOP] < KEYS

CONFIG is the JSON file `ringwise lookup --cluster-format grpc` reads (see
docs/grpc.md): `target` (an `ipv4:` channel target, `ADDR:PORT,...`,
addresses repeated for weight), `serviceConfig` (given to grpcio as the
`grpc.service_config` channel option, verbatim) and optional
`channelArgs` (more channel options, e.g.
`grpc.lb.ring_hash.ring_size_cap`). KEYS has one ASCII key a line.

The script starts one loopback gRPC server per distinct address of the
target (a generic handler: `/ringwise.Peer/Who` answers the server's own
address, no protoc needed), opens ONE channel to the target with the
service config, and sends each key as the value of the service config's
`requestHashHeader` (gRFC A76; grpcio honours it only with
GRPC_EXPERIMENTAL_RING_HASH_SET_REQUEST_HASH_KEY=true, set here); a key
holding commas goes as one header value per comma-separated part, which
gRPC joins with "," before hashing. It prints, one a line, the address
that answered each key.

With STOP (one address of the target), after that pass it stops STOP's
server and sends every key again on the same channel, printing the
second pass's answers after the first: ring_hash then walks past the
endpoint that is no longer READY to the next one on the ring.
"""

import json
import os
import sys
import time
from concurrent import futures

os.environ["GRPC_EXPERIMENTAL_RING_HASH_SET_REQUEST_HASH_KEY"] = "true"
# grpc-core logs a GOAWAY at INFO when the stopped server closes.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

import grpc  # noqa: E402  (the variable must be set before grpc loads)

METHOD = "/ringwise.Peer/Who"
DEADLINE = 30.0


def serve(address):
    """A server on `address` whose one method answers that address."""

    def who(_request, _context):
        return address.encode()

    handler = grpc.method_handlers_generic_handler(
        "ringwise.Peer", {"Who": grpc.unary_unary_rpc_method_handler(who)}
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((handler,))
    if server.add_insecure_port(address) == 0:
        sys.exit(f"grpc_ring_hash.py: cannot listen on {address}")
    server.start()
    return server


def ask(call, header, keys):
    """The address that answers each key, in order."""
    answers = []
    for key in keys:
        # A key with commas goes as several values of the header, which
        # gRPC joins with "," before hashing (gRFC A76): the same key.
        metadata = tuple((header, part) for part in key.split(","))
        reply = call(b"", metadata=metadata, timeout=DEADLINE, wait_for_ready=True)
        answers.append(reply.decode())
    return answers


def main():
    with open(sys.argv[1], encoding="utf-8") as file:
        config = json.load(file)
    stop = sys.argv[2] if len(sys.argv) > 2 else None
    target = config["target"]
    assert target.startswith("ipv4:"), "the peer serves ipv4: targets"
    addresses = list(dict.fromkeys(target[len("ipv4:") :].split(",")))
    lb = config["serviceConfig"]["loadBalancingConfig"][0]["ring_hash_experimental"]
    header = lb["requestHashHeader"]
    keys = sys.stdin.buffer.read().decode("ascii").split("\n")
    if keys and keys[-1] == "":
        keys.pop()

    servers = {address: serve(address) for address in addresses}
    options = [("grpc.service_config", json.dumps(config["serviceConfig"]))]
    options.extend(config.get("channelArgs", {}).items())
    channel = grpc.insecure_channel(target, options=options)
    call = channel.unary_unary(METHOD)
    out = ask(call, header, keys)
    if stop is not None:
        servers.pop(stop).stop(None).wait()
        # The channel sees the connection close; calls then walk past the
        # endpoint once its reconnection attempt has failed (wait_for_ready
        # keeps a call queued while the picker waits for that).
        time.sleep(0.2)
        out.extend(ask(call, header, keys))
    channel.close()
    for server in servers.values():
        server.stop(None)
    sys.stdout.write("".join(f"{answer}\n" for answer in out))


main()
