"""monoDrive protocol state, sans-IO (h11 style): the control channel's request/reply
bookkeeping (:class:`ClientSession`, SUPPLEMENT §4.2) and each sensor stream's
(:class:`SensorSession`, §4.1, §4.4).

Bytes in (``receive_data``), bytes out (:meth:`ClientSession.data_to_send`), events back; no
sockets, threads or clocks of their own (``now`` is passed in, in seconds).

Control channel:

* One request outstanding: requests wait in a queue and are sent one at a time.
* A reply answers the outstanding request when it carries that request's ``reference``, else
  when it has the outstanding request's type (no public client matches by reference; the
  simulator need not echo it).  Anything else is an :class:`Unsolicited` event; a reply to a
  request that already timed out is a :class:`LateReply`.
* Each request has a deadline; :meth:`tick` times out those whose deadline passed (queued or
  sent) so every caller gets an answer in time.
* The configuration sent (simulator, weather, ego vehicle, scenario, trajectory, sensors) is
  kept, and :meth:`connection_made` queues it again in monoDrive's client order, so a
  restarted simulator is configured as before.
"""
from __future__ import annotations

import collections
import itertools
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.core.framer import Frame
from ros_sim_bridge.monodrive import sensors
from ros_sim_bridge.monodrive.codec import control, lidar, messages
from ros_sim_bridge.monodrive.codec import sensor as sensor_codec

# Configuration message types, in the order monoDrive's clients send them after connecting.
CONFIG_ORDER = ('SimulatorConfig_ID', 'WeatherConfig', 'EgoVehicleConfig_ID',
                'ScenarioConfig_ID', 'ClosedLoopConfigCommand_ID',
                'REPLAY_ConfigureTrajectoryCommand_ID', 'REPLAY_ConfigureSensorsCommand_ID')
SENSOR_TYPES = ('REPLAY_ConfigureSensorsCommand_ID',)
# Message types after whose acknowledgement the simulator listens on the sensors' ports.
SENSOR_CONFIG_TYPES = ('REPLAY_ConfigureSensorsCommand_ID', 'REPLAY_ReConfigureSensorCommand_ID',
                       'AttachSensorCommand_ID')
EGO_CONTROL = 'EgoControl_ID'


@dataclass
class Request:
    reference: int
    type: str
    body: Any
    deadline: float
    replay: bool = False        # re-sent configuration (no caller waits for it)
    sent: bool = False
    frame: bytes = field(default=b'', repr=False)


@dataclass
class Reply:
    """The answer to ``request``."""
    request: Request
    message: control.ControlMessage


@dataclass
class Timeout:
    request: Request
    sent: bool                  # False: it never left the queue (link down or busy)


@dataclass
class Failed:
    """The link dropped while ``request`` was outstanding."""
    request: Request
    reason: str


@dataclass
class Refused:
    """The reply to ``request`` arrived but is refused (non-standard JSON: NaN/Infinity)."""
    request: Request
    error: CodecError


@dataclass
class Unsolicited:
    """A message that answers nothing outstanding (a status, a newer simulator's event)."""
    message: control.ControlMessage


@dataclass
class LateReply:
    """A reply whose request had already timed out."""
    request: Request
    message: control.ControlMessage


@dataclass
class BadInput:
    error: CodecError


Event = Union[Reply, Timeout, Failed, Refused, Unsolicited, LateReply, BadInput]


class ClientSession:
    def __init__(self, *, max_message: int = control.DEFAULT_MAX_MESSAGE,
                 magic: int = control.CLIENT_MAGIC, first_reference: int = 1,
                 replay_timeout: float = 10.0, validate: bool = True):
        self.framer = control.ControlFramer(max_message)
        self.magic = magic
        self.replay_timeout = replay_timeout
        self.validate = validate
        self._references = itertools.count(first_reference)
        self._queue: collections.deque[Request] = collections.deque()
        self.outstanding: Optional[Request] = None
        self._timed_out: collections.OrderedDict[int, Request] = collections.OrderedDict()
        self.connected = False
        # type → body (sensors: listen_port → body), in arrival order
        self.configuration: dict[str, Any] = {}
        self.sensors: dict[int, Any] = {}
        self._control: Optional[Request] = None      # the last EgoControl queued

    # --- requests out ---------------------------------------------------------------------
    def request(self, msg_type: str, body: Any, now: float, timeout: float, *,
                validate: Optional[bool] = None) -> Request:
        """Queue one request; CodecError (naming the field) when a known body is invalid
        (checked when ``validate``, by default the session's setting)."""
        if not isinstance(msg_type, str) or not msg_type:
            raise CodecError('request', 'message type must be a non-empty string', field='type')
        if self.validate if validate is None else validate:
            messages.validate(msg_type, body)
        req = Request(next(self._references), msg_type, body, now + timeout)
        req.frame = control.encode_request(msg_type, req.reference, body, magic=self.magic)
        self._remember(msg_type, body)
        self._queue.append(req)
        return req

    def ego_control(self, body: Any, now: float, timeout: float) -> Request:
        """Queue an EgoControl_ID; one still waiting to be sent is dropped first (the newest
        command wins: a link that is busy or down never sends stale controls)."""
        old = self._control
        if old is not None and not old.sent:
            self.cancel(old)
        self._control = self.request(EGO_CONTROL, body, now, timeout)
        return self._control

    def remember(self, msg_type: str, body: Any) -> None:
        """Keep configuration to send on every (re)connection, without sending it now (the
        start-up configuration of a client that is not connected yet)."""
        if self.validate:
            messages.validate(msg_type, body)
        control.dumps(body)          # standard JSON only, or CodecError now (not at connect)
        self._remember(msg_type, body)

    def _remember(self, msg_type: str, body: Any) -> None:
        if msg_type in SENSOR_TYPES:
            for sensor in body if isinstance(body, list) else [body]:
                self.sensors[int(sensor['listen_port'])] = sensor
        elif msg_type == 'REPLAY_ReConfigureSensorCommand_ID':
            self.sensors[int(body['listen_port'])] = body
        elif msg_type in CONFIG_ORDER:
            self.configuration[msg_type] = body

    def data_to_send(self) -> bytes:
        """The next request's frame when the link is up and nothing is outstanding."""
        if not self.connected or self.outstanding is not None or not self._queue:
            return b''
        req = self._queue.popleft()
        req.sent = True
        self.outstanding = req
        return req.frame

    @staticmethod
    def configured_ports(req: Request) -> set:
        """The sensor ports an acknowledged ``req`` has the simulator listen on (none for a
        request that configures no sensor)."""
        if req.type not in SENSOR_CONFIG_TYPES:
            return set()
        bodies = req.body if isinstance(req.body, list) else [req.body]
        return {b.get('listen_port') for b in bodies if isinstance(b, dict)}

    @property
    def pending(self) -> int:
        return len(self._queue) + (self.outstanding is not None)

    def cancel(self, req: Request) -> None:
        """Forget a request whose caller stopped waiting (its reply becomes a LateReply)."""
        if req is self.outstanding:
            self.outstanding = None
            self._keep_timed_out(req)
        else:
            try:
                self._queue.remove(req)
            except ValueError:
                pass

    # --- link state ----------------------------------------------------------------------
    def connection_made(self, now: float) -> list[Request]:
        """The link is up: queue the remembered configuration first, in client order."""
        self.connected = True
        self.framer.reset()
        replays = []
        for msg_type in CONFIG_ORDER:
            if msg_type in SENSOR_TYPES:
                bodies = list(self.sensors.values())
            elif msg_type in self.configuration:
                bodies = [self.configuration[msg_type]]
            else:
                bodies = []
            for body in bodies:
                req = Request(next(self._references), msg_type, body,
                              now + self.replay_timeout, replay=True)
                req.frame = control.encode_request(msg_type, req.reference, body,
                                                   magic=self.magic)
                replays.append(req)
        # stale replays from an earlier connection are dropped, callers' requests kept
        kept = [r for r in self._queue if not r.replay]
        self._queue = collections.deque(replays + kept)
        return replays

    def connection_lost(self, reason: str) -> list[Event]:
        self.connected = False
        events: list[Event] = []
        if self.outstanding is not None:
            events.append(Failed(self.outstanding, reason))
            self.outstanding = None
        return events

    # --- bytes in ------------------------------------------------------------------------
    def receive_data(self, data: bytes) -> list[Event]:
        events: list[Event] = []
        for item in self.framer.feed(data):
            if isinstance(item, CodecError):
                events.append(BadInput(item))
                continue
            events.extend(self.receive_frame(item))
        return events

    def receive_frame(self, frame: Frame) -> list[Event]:
        try:
            msg = control.decode_frame(frame)
        except CodecError as err:
            return [BadInput(err)] + self._refuse(frame, err)
        out = self.outstanding
        if out is not None and (msg.reference == out.reference or
                                (msg.type == out.type and msg.reference not in self._timed_out)):
            self.outstanding = None
            return [Reply(out, msg)]
        if msg.reference is not None and msg.reference in self._timed_out:
            return [LateReply(self._timed_out.pop(msg.reference), msg)]
        return [Unsolicited(msg)]

    def _refuse(self, frame: Frame, err: CodecError) -> list[Event]:
        """A reply refused for NaN/Infinity still answers its request (the caller learns why
        at once instead of waiting for its timeout) when its envelope names that request."""
        out = self.outstanding
        if out is None or err.kind != control.NON_STANDARD_JSON:
            return []
        msg_type, reference = control.peek_envelope(frame.body)
        if reference == out.reference or (reference is None and msg_type == out.type):
            self.outstanding = None
            return [Refused(out, err)]
        return []

    # --- time ----------------------------------------------------------------------------
    def tick(self, now: float) -> list[Event]:
        events: list[Event] = []
        out = self.outstanding
        if out is not None and now >= out.deadline:
            self.outstanding = None
            self._keep_timed_out(out)
            events.append(Timeout(out, True))
        for req in [r for r in self._queue if now >= r.deadline]:
            self._queue.remove(req)
            events.append(Timeout(req, False))
        return events

    def _keep_timed_out(self, req: Request) -> None:
        self._timed_out[req.reference] = req
        while len(self._timed_out) > 64:
            self._timed_out.popitem(last=False)

    def next_deadline(self) -> Optional[float]:
        times = [r.deadline for r in self._queue]
        if self.outstanding is not None:
            times.append(self.outstanding.deadline)
        return min(times) if times else None


class TrajectorySteps:
    """A trajectory file stepped through one REPLAY_StateStepSimulationCommand_ID per frame
    (SUPPLEMENT §4.2): the next frame to send, and whether its body is checked (the
    ``state_frames`` layout is that message's body; other layouts are sent as they are)."""
    MESSAGE = 'REPLAY_StateStepSimulationCommand_ID'

    def __init__(self, frames: list, validate: bool):
        self.frames = frames
        self.validate = validate
        self.cursor = 0             # frames sent and acknowledged

    def next_frame(self) -> Optional[Any]:
        """The frame to send next; None at the end."""
        return self.frames[self.cursor] if self.cursor < len(self.frames) else None

    def acknowledged(self) -> None:
        """The simulator took the frame: the next one is due."""
        self.cursor += 1


# --- sensor streams ---------------------------------------------------------------------------
@dataclass
class SampleGap:
    """Samples the simulator numbered but never sent, just before ``sample_count``."""
    sample_count: int
    missing: int                # before this sample
    total_missing: int          # on this stream so far
    total_gaps: int


class SensorSession:
    """One sensor stream (SUPPLEMENT §4.1, §4.4): its framer, the header generation of the
    connection, the sample gaps, and for a lidar the revolution being assembled.

    :meth:`receive_data` (or :meth:`receive_message` with a message the framer gave) returns
    events: :class:`SampleGap`, the sample's record (:mod:`ros_sim_bridge.monodrive.sensors`;
    a lidar gives a :class:`~ros_sim_bridge.monodrive.sensors.Revolution` when one is
    complete) or :class:`BadInput`."""

    def __init__(self, config: sensors.SensorConfig, *, header_size='auto',
                 byte_order: str = 'big', max_sample: int = sensor_codec.DEFAULT_MAX_SAMPLE,
                 lidar_max_packets: int = 4000, max_annotation_boxes: int = 256):
        self.config = config
        self.max_annotation_boxes = max_annotation_boxes
        self.framer = sensor_codec.SensorFramer(f'{config.kind} {config.port}', max_sample,
                                                byte_order)
        self.detector = sensor_codec.HeaderDetector(header_size, byte_order)
        self.gaps = sensor_codec.SampleGaps()
        self.assembler = (lidar.RevolutionAssembler(lidar_max_packets)
                          if config.kind == 'Lidar' else None)

    def connection_made(self) -> None:
        """A new connection: its first message decides the header generation again."""
        self.detector.reset()
        self.gaps.reset()
        if self.assembler is not None:
            self.assembler.reset()

    @property
    def header_size(self) -> Optional[int]:
        return self.detector.size

    @property
    def garbage_bytes(self) -> int:
        """Bytes skipped while resynchronising."""
        return self.framer.garbage_bytes

    def receive_data(self, data) -> list:
        events: list = []
        for item in self.framer.feed(data):
            if isinstance(item, CodecError):
                events.append(BadInput(item))
            else:
                events.extend(self.receive_message(item))
        return events

    def receive_message(self, message) -> list:
        """The events of one framed message (header included)."""
        cfg = self.config
        try:
            header, payload = self.detector.split(message, cfg.expected, cfg.json)
        except CodecError as err:
            return [BadInput(err)]
        events: list = []
        missing = self.gaps.update(header.sample_count)
        if missing:
            events.append(SampleGap(header.sample_count, missing, self.gaps.missing,
                                    self.gaps.gaps))
        try:
            record = sensors.decode_sample(cfg, header, payload,
                                           max_annotation_boxes=self.max_annotation_boxes)
        except CodecError as err:
            events.append(BadInput(err))
            return events
        if isinstance(record, sensors.LidarPacket):
            done = self.assembler.add(bytes(record.data), header.game_time)
            if done is not None:
                events.append(sensors.Revolution(header, done[0], done[1]))
            return events
        events.append(record)
        return events
