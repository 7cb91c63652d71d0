from .a import ping
from .b import pong
