#!/usr/bin/python3
# svcd's gRPC data plane driven from Python's grpcio, the C-core gRPC stack (a client this project
# did not write), for test/grpc/python-client.test.ts. Run with Debian's /usr/bin/python3
# (python3-grpcio, python3-protobuf); the test makes every assertion, this only reports.
#
# No generated stubs (grpcio-tools is not there, and a stub would hide what a generic client does):
# the schema is the FileDescriptorSet the test fetched through the star's server reflection, as
# grpcurl gets it, loaded into a fresh descriptor pool; each call is the channel's generic
# unary_unary / unary_stream / stream_stream, chosen by the method descriptor's streaming flags, with
# the pool's message classes' SerializeToString / FromString.
#
# Input: argv[1] is one JSON object (the scenario and its parameters; bytes as base64). Output: one
# JSON line on stdout with what the star answered. A gRPC status is an answer and is reported; any
# other failure (a missing module, a descriptor the pool refuses) raises: traceback on stderr, exit 1.
import base64
import json
import queue
import sys

import grpc
from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory

DATA = 'svc.v1.DataService'
STATUS_DETAILS_KEY = 'grpc-status-details-bin'
SEQUENCE_DETAIL_TYPE_URL = 'type.googleapis.com/svc.v1.SequenceDetail'
# The end of a session's requests: the request iterator returns, and grpcio half-closes.
HALF_CLOSE = object()

_F = descriptor_pb2.FieldDescriptorProto
# google.rpc.Status (AIP-193), what the star packs into grpc-status-details-bin. No svc.v1 file
# imports it, so reflection does not serve it, and Debian's python3-protobuf lacks it (it lives in
# googleapis-common-protos): declared here as the AIP gives it, over the real google.protobuf.Any.
RPC_STATUS_FILE = descriptor_pb2.FileDescriptorProto(
    name='google/rpc/status.proto', package='google.rpc', syntax='proto3',
    dependency=['google/protobuf/any.proto'],
    message_type=[descriptor_pb2.DescriptorProto(name='Status', field=[
        _F(name='code', number=1, type=_F.TYPE_INT32, label=_F.LABEL_OPTIONAL, json_name='code'),
        _F(name='message', number=2, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL, json_name='message'),
        _F(name='details', number=3, type=_F.TYPE_MESSAGE, label=_F.LABEL_REPEATED, type_name='.google.protobuf.Any', json_name='details'),
    ])],
)


class Schema:
    """The reflected files in a fresh pool, each added after the files it imports (the C++ pool
    builds a file only once its dependencies are in)."""

    def __init__(self, descriptor_set_path):
        with open(descriptor_set_path, 'rb') as f:
            reflected = descriptor_pb2.FileDescriptorSet.FromString(f.read())
        files = {f.name: f for f in reflected.file}
        for extra in (descriptor_pb2.FileDescriptorProto.FromString(any_pb2.DESCRIPTOR.serialized_pb), RPC_STATUS_FILE):
            files.setdefault(extra.name, extra)
        self.pool = descriptor_pool.DescriptorPool()
        added = set()

        def add(name, importer):
            if name in added:
                return
            if name not in files:
                raise RuntimeError(f'{importer} imports {name}, which the reflected descriptor set lacks')
            for dep in files[name].dependency:
                add(dep, name)
            self.pool.Add(files[name])
            added.add(name)

        for name in files:
            add(name, 'the set')
        self.factory = message_factory.MessageFactory(self.pool)

    def methods(self, service):
        return [m.name for m in self.pool.FindServiceByName(service).methods]

    def message(self, full_name):
        desc = self.pool.FindMessageTypeByName(full_name)
        # protobuf 4.22 added GetMessageClass and deprecated GetPrototype; 4.21 (Debian 12) has only the latter.
        get_class = getattr(message_factory, 'GetMessageClass', None)
        return get_class(desc) if get_class else self.factory.GetPrototype(desc)


class Client:
    def __init__(self, schema, target, token, options=()):
        self.schema = schema
        # No HTTP proxy: a machine's http_proxy must not reroute a loopback channel.
        self.channel = grpc.insecure_channel(target, options=[('grpc.enable_http_proxy', 0), *options])
        self.metadata = (('authorization', f'Bearer {token}'),) if token else ()

    def new(self, message_name, /, **fields):
        # Positional-only: svc.v1.Header has a field called `name`.
        return self.schema.message(f'svc.v1.{message_name}')(**fields)

    def method(self, name, service=DATA):
        desc = self.schema.pool.FindServiceByName(service).methods_by_name[name]
        proto = descriptor_pb2.MethodDescriptorProto()
        desc.CopyToProto(proto)
        request = self.schema.message(desc.input_type.full_name)
        response = self.schema.message(desc.output_type.full_name)
        make = {
            (False, False): self.channel.unary_unary,
            (False, True): self.channel.unary_stream,
            (True, False): self.channel.stream_unary,
            (True, True): self.channel.stream_stream,
        }[(proto.client_streaming, proto.server_streaming)]
        return make(f'/{service}/{name}', request_serializer=request.SerializeToString, response_deserializer=response.FromString)

    def call(self, name, request):
        return self.method(name)(request, metadata=self.metadata)

    def attempt(self, name, request, shape):
        """{'ok': shape(response)} or {'error': failure(status)}."""
        try:
            return {'ok': shape(self.call(name, request))}
        except grpc.RpcError as err:
            return {'error': self.failure(err)}

    def failure(self, err):
        out = {'code': err.code().name, 'details': err.details() or ''}
        raw = dict(err.trailing_metadata() or ()).get(STATUS_DETAILS_KEY)
        if raw is not None:
            status = self.schema.message('google.rpc.Status').FromString(raw)
            details = []
            for d in status.details:
                detail = {'type_url': d.type_url}
                if d.type_url == SEQUENCE_DETAIL_TYPE_URL:
                    seq = self.schema.message('svc.v1.SequenceDetail').FromString(d.value)
                    detail['tail'] = position(seq.tail) if seq.HasField('tail') else None
                details.append(detail)
            out['status'] = {'code': status.code, 'message': status.message, 'details': details}
        return out

    # ---- the verbs the scenarios use ----

    def create_bucket(self, bucket):
        config = self.new('BucketConfig', create_stream_on_append=True)
        return self.call('CreateBucket', self.new('CreateBucketRequest', bucket=bucket, config=config)).info.name

    def append_records(self, records):
        return [
            self.new('AppendRecord', body=unb64(r['body_b64']),
                     headers=[self.new('Header', name=unb64(n), value=unb64(v)) for n, v in r['headers']],
                     **({'timestamp_ms': r['timestamp_ms']} if 'timestamp_ms' in r else {}))
            for r in records
        ]

    def append(self, cfg, records, **extra):
        return self.new('AppendRequest', bucket=cfg['bucket'], key=unb64(cfg['key_b64']), records=self.append_records(records), **extra)

    def read_all(self, cfg):
        """A Read from seq_num 0 (a oneof member set to 0 is still set: the start is present)."""
        request = self.new('ReadRequest', bucket=cfg['bucket'], key=unb64(cfg['key_b64']), seq_num=0)
        assert request.WhichOneof('start') == 'seq_num', 'seq_num=0 must select the start'
        page = self.call('Read', request)
        return {'records': [record(r) for r in page.records], 'tail': position(page.tail) if page.HasField('tail') else None}

    def check_tail(self, cfg):
        res = self.call('CheckTail', self.new('CheckTailRequest', bucket=cfg['bucket'], key=unb64(cfg['key_b64'])))
        return position(res.tail) if res.HasField('tail') else None


def b64(data):
    return base64.b64encode(data).decode('ascii')


def unb64(text):
    return base64.b64decode(text)


def position(p):
    return {'seq_num': p.seq_num, 'timestamp_ms': p.timestamp_ms}


def position_of_tail(res):
    """The tail of a CheckTailResponse."""
    return position(res.tail)


def acked(res):
    """start, end and tail of an AppendResponse or AppendSessionResponse; None for one unset."""
    return {n: position(getattr(res, n)) if res.HasField(n) else None for n in ('start', 'end', 'tail')}


def record(r):
    return {'seq_num': r.seq_num, 'timestamp_ms': r.timestamp_ms, 'body_b64': b64(r.body),
            'headers': [[b64(h.name), b64(h.value)] for h in r.headers]}


# ---- scenarios: each returns what the star answered ----

def append_read(c, cfg):
    created = c.create_bucket(cfg['bucket'])
    append = acked(c.call('Append', c.append(cfg, cfg['records'])))
    services = {name: c.schema.methods(name) for name in (DATA, 'svc.v1.AdminService')}
    return {'services': services, 'created': created, 'append': append, 'read': c.read_all(cfg), 'check_tail': c.check_tail(cfg)}


def match_miss(c, cfg):
    c.create_bucket(cfg['bucket'])
    first = acked(c.call('Append', c.append(cfg, cfg['records'])))
    miss = c.attempt('Append', c.append(cfg, cfg['more'], match_seq_num=cfg['wrong_match_seq_num']), acked)
    after = c.read_all(cfg)
    # A retry as a client would write it: match_seq_num is the tail the miss's detail named.
    tails = [d.get('tail') for d in miss.get('error', {}).get('status', {}).get('details', []) if d.get('tail')]
    retry = c.attempt('Append', c.append(cfg, cfg['more'], match_seq_num=tails[0]['seq_num']), acked) if tails else None
    return {'first': first, 'miss': miss, 'after': after, 'retry': retry}


def subscribe(c, cfg):
    c.create_bucket(cfg['bucket'])
    c.call('Append', c.append(cfg, cfg['records']))
    request = c.new('SubscribeRequest', bucket=cfg['bucket'], key=unb64(cfg['key_b64']), seq_num=0)
    call = c.method('Subscribe')(request, metadata=c.metadata)
    want = len(cfg['records']) + len(cfg['live'])
    responses = []
    live_sent = False
    got = 0
    for res in call:
        responses.append({'records': [record(r) for r in res.records], 'next_seq_num': res.next_seq_num,
                          'tail': position(res.tail) if res.HasField('tail') else None})
        got += len(res.records)
        # Once the history is in, append the live records on the same channel while the call is open.
        if not live_sent and got >= len(cfg['records']):
            live_sent = True
            c.call('Append', c.append(cfg, cfg['live']))
        if got >= want:
            break
    # True only if the call was still live: the star had not ended it (a cancel after the end is False).
    cancelled = call.cancel()
    return {'responses': responses, 'cancelled': cancelled, 'code': call.code().name, 'check_tail_after': c.check_tail(cfg)}


def append_session(c, cfg):
    c.create_bucket(cfg['bucket'])
    sends = queue.Queue()

    def requests():
        while (m := sends.get()) is not HALF_CLOSE:
            yield m

    call = c.method('AppendSession')(requests(), metadata=c.metadata)
    sends.put(c.new('AppendSessionRequest', open=c.new('AppendSessionOpen', bucket=cfg['bucket'], key=unb64(cfg['key_b64']))))
    acks = []
    # Lockstep: each batch goes out once the previous one is acked, with the request side open, so an
    # ack that came only at half-close would hang here (and fail at the test's bound) rather than pass.
    for batch in cfg['batches']:
        sends.put(c.new('AppendSessionRequest', batch=c.new('AppendSessionBatch', records=c.append_records(batch))))
        try:
            acks.append(acked(next(call)))
        except StopIteration:
            break
        except grpc.RpcError:
            break
    acked_before_half_close = len(acks)
    sends.put(HALF_CLOSE)
    extra = []
    try:
        for res in call:
            extra.append(acked(res))
        code, details = call.code().name, call.details() or ''
    except grpc.RpcError as err:
        code, details = err.code().name, err.details() or ''
    return {'acks': acks + extra, 'acked_before_half_close': acked_before_half_close, 'code': code, 'details': details,
            'read': c.read_all(cfg)}


def oversize(c, cfg):
    c.create_bucket(cfg['bucket'])
    target = cfg['message_bytes']
    # One record whose body brings the serialized AppendRequest to exactly `target` bytes: the framing
    # (tags, varint lengths) depends a little on the body's length, so settle it in a few rounds.
    body_bytes = target
    for _ in range(4):
        request = c.new('AppendRequest', bucket=cfg['bucket'], key=unb64(cfg['key_b64']),
                        records=[c.new('AppendRecord', body=b'a' * body_bytes)])
        size = request.ByteSize()
        if size == target:
            break
        body_bytes -= size - target
    refused = c.attempt('Append', request, acked)
    del request
    # The same channel must still serve: the star's reset of the refused call's stream ends that call only.
    after = c.attempt('Append', c.append(cfg, cfg['records']), acked)
    return {'message_bytes': size, 'refused': refused, 'after': after, 'check_tail': c.check_tail(cfg)}


def unauthenticated(c, cfg):
    tail_request = c.new('CheckTailRequest', bucket=cfg['bucket'], key=unb64(cfg['key_b64']))
    out = {
        'no_token_check_tail': c.attempt('CheckTail', tail_request, position_of_tail),
        'no_token_append': c.attempt('Append', c.append(cfg, cfg['records']), acked),
    }
    c.metadata = (('authorization', 'Bearer not-a-jwt'),)
    out['bad_token_check_tail'] = c.attempt('CheckTail', tail_request, position_of_tail)
    return out


SCENARIOS = {
    'append-read': append_read,
    'match-miss': match_miss,
    'subscribe': subscribe,
    'append-session': append_session,
    'oversize': oversize,
    'unauthenticated': unauthenticated,
}


def main():
    cfg = json.loads(sys.argv[1])
    schema = Schema(cfg['descriptor_set'])
    client = Client(schema, cfg['target'], cfg.get('token'), [tuple(o) for o in cfg.get('channel_options', [])])
    try:
        out = SCENARIOS[cfg['scenario']](client, cfg)
    finally:
        client.channel.close()
    print(json.dumps(out))


if __name__ == '__main__':
    main()
