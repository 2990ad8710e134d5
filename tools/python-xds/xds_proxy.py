"""A proxy written with Python grpcio and Envoy's generated xDS classes.

Subscribes to a relay through envoy.service.discovery.v3.AggregatedDiscoveryService
(state of the world, or delta with --delta), ACKs what it receives, and once it
holds --count resources prints them as JSON: name -> the cluster's name read by
Envoy's own envoy.config.cluster.v3.Cluster class. Exits 1 on a timeout.
"""

import argparse
import json
import queue
import sys

import grpc
from envoy.config.cluster.v3 import cluster_pb2
from envoy.config.core.v3 import base_pb2
from envoy.service.discovery.v3 import ads_pb2_grpc, discovery_pb2

RESOURCE_WRAPPER = "type.googleapis.com/envoy.service.discovery.v3.Resource"


def cluster_name(any_message):
    cluster = cluster_pb2.Cluster()
    if not any_message.Unpack(cluster):
        raise SystemExit(f"not a Cluster: {any_message.type_url}")
    return cluster.name


def sotw_names(response):
    """State of the world: resources may come wrapped in a Resource (with a name)."""
    held = {}
    for any_message in response.resources:
        if any_message.type_url == RESOURCE_WRAPPER:
            wrapper = discovery_pb2.Resource()
            any_message.Unpack(wrapper)
            held[wrapper.name] = cluster_name(wrapper.resource)
        else:
            held["(unnamed)" + any_message.value.hex()[:8]] = cluster_name(any_message)
    return held


def run(args):
    node = base_pb2.Node(id="python-xds-proxy")
    outgoing = queue.Queue()
    if args.delta:
        outgoing.put(discovery_pb2.DeltaDiscoveryRequest(node=node, type_url=args.type_url))
    else:
        outgoing.put(discovery_pb2.DiscoveryRequest(node=node, type_url=args.type_url))

    def requests():
        while True:
            item = outgoing.get()
            if item is None:
                return
            yield item

    channel = grpc.insecure_channel(args.relay)
    stub = ads_pb2_grpc.AggregatedDiscoveryServiceStub(channel)
    call = (stub.DeltaAggregatedResources if args.delta else stub.StreamAggregatedResources)(
        requests(), timeout=args.timeout
    )
    held = {}
    updates = 0
    try:
        for response in call:
            updates += 1
            if args.delta:
                for name in response.removed_resources:
                    held.pop(name, None)
                for resource in response.resources:
                    held[resource.name] = cluster_name(resource.resource)
                outgoing.put(discovery_pb2.DeltaDiscoveryRequest(
                    node=node, type_url=response.type_url, response_nonce=response.nonce))
            else:
                held = sotw_names(response)
                outgoing.put(discovery_pb2.DiscoveryRequest(
                    node=node, type_url=response.type_url, version_info=response.version_info,
                    response_nonce=response.nonce))
            if len(held) >= args.count:
                break
    except grpc.RpcError as error:
        print(f"xds_proxy: {error.code()}: {error.details()}", file=sys.stderr)
        return 1
    finally:
        outgoing.put(None)
        call.cancel()
    print(json.dumps({"updates": updates, "resources": held}, sort_keys=True))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--relay", required=True)
    parser.add_argument("--type-url", required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--delta", action="store_true")
    parser.add_argument("--timeout", type=float, default=20.0)
    return run(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
