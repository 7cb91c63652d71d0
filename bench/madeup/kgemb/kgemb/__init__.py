from .models import TransE, DistMult
from .training import SLCWATrainer
