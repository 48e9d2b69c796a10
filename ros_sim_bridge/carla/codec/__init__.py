"""Sans-IO codec of CARLA recorder ``.log`` files (SUPPLEMENT §5): header, packets, frames."""
from .header import (MAGIC, SUPPORTED_VERSIONS, InfoHeader, decode_header,  # noqa: F401
                     encode_header)
from .records import (ACTOR_TYPES, DTYPES, FIXED_IDS, ID_TABLES, LATEST_TABLE,  # noqa: F401
                      NOT_AN_ACTOR, UE4, UE5, ActorAdd, Layout, PacketDecoder, PacketEncoder,
                      PhysicsControl, WalkerBones, WheelAnimation, vehicle_lights)
from ros_sim_bridge.core.damage import Damage  # noqa: F401  (the one report type)
from .recording import Frame, Recording  # noqa: F401
