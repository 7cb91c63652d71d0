MODELS = {}


def register(name):
    def wrap(cls):
        MODELS[name] = cls
        return cls
    return wrap


def build_model(cfg):
    return MODELS[cfg["name"]](**cfg.get("kwargs", {}))
