from pkg.a import ping


def pong(x, n):
    return ping(x, n)
