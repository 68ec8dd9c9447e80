#!/usr/bin/env python3
"""The rbfpde gdcg cycle in JAX (jit), as an independent reference for bench_gpu_cycle.

One cycle, on the device: fresh uniform collocation points (interior of the unit square/cube and
its boundary, faces by area), f of the seed problem at them, residuals e = M w - f, b = N w - p,
the gradient of I = 1/(2N) sum e^2 + lam/(2K) sum b^2 with respect to centres and widths (weights
fixed) by autodiff, one GD step (widths clamped), A = M^T M / N + lam N^T N / K and s, 50 CG
iterations on the weights (tolerance 0). Same sizes, split N:K = 176:48, lam = 100 as the C++
bench. Timing: jit-compiled, 5 warm-up runs, median of 30, each ending in block_until_ready.

Usage: python3 bench/jax_rbf_cycle.py [double|float|both]   (prints a markdown table)
"""
import statistics
import sys
import time

import jax
import jax.numpy as jnp

SIZES = [(64, 224), (64, 524), (1024, 18432), (4096, 73728)]
RUNS, WARMUP = 30, 5


def make_cycle(m, n, dim, dtype, lam=100.0, lr=1e-3, cg_iters=50):
    n_bnd = max(1, round(n * 48 / 224))
    n_int = n - n_bnd
    pi = jnp.pi

    def sample(key):
        k1, k2, k3 = jax.random.split(key, 3)
        xi = jax.random.uniform(k1, (n_int, dim), dtype)
        face = jax.random.randint(k2, (n_bnd,), 0, 2 * dim)  # unit faces: equal areas
        xb = jax.random.uniform(k3, (n_bnd, dim), dtype)
        on_axis = jax.nn.one_hot(face // 2, dim, dtype=bool)
        xb = jnp.where(on_axis, (face % 2).astype(dtype)[:, None], xb)
        s = jnp.prod(jnp.sin(pi * xi), axis=1)
        f = s if dim == 2 else -3 * pi**2 * s
        p = jnp.zeros((n_bnd,), dtype)
        return xi, f, xb, p

    def phi_lap(c, a, x):
        diff = x[:, None, :] - c[None, :, :]
        r2 = jnp.sum(diff * diff, axis=-1)
        ia2 = 1.0 / (a * a)
        phi = jnp.exp(-r2 * ia2)
        lap = phi * (4.0 * r2 * ia2 * ia2 - 2.0 * dim * ia2)
        return phi, lap

    def loss(c, a, w, xi, f, xb, p):
        _, lap = phi_lap(c, a, xi)
        phi_b, _ = phi_lap(c, a, xb)
        e = lap @ w - f
        b = phi_b @ w - p
        return 0.5 * jnp.mean(e * e) + 0.5 * lam * jnp.mean(b * b)

    @jax.jit
    def cycle(c, a, w, key):
        xi, f, xb, p = sample(key)
        value, (gc, ga) = jax.value_and_grad(loss, argnums=(0, 1))(c, a, w, xi, f, xb, p)
        c = c - lr * gc
        a = jnp.maximum(a - lr * ga, 1e-4)
        _, M = phi_lap(c, a, xi)
        N, _ = phi_lap(c, a, xb)
        A = M.T @ M / n_int + lam * (N.T @ N) / n_bnd
        s = M.T @ f / n_int + lam * (N.T @ p) / n_bnd
        r = s - A @ w
        d = r
        rr = r @ r

        def body(_, st):
            w, r, d, rr = st
            ad = A @ d
            alpha = rr / (d @ ad)
            w = w + alpha * d
            r = r - alpha * ad
            rr_new = r @ r
            d = r + (rr_new / rr) * d
            return w, r, d, rr_new

        w, r, d, rr = jax.lax.fori_loop(0, cg_iters, body, (w, r, d, rr))
        return c, a, w, value

    return cycle


def initial(m, dim, dtype, seed=3):
    key = jax.random.PRNGKey(seed)
    k1, k2 = jax.random.split(key)
    spacing = (1.0 / m) ** (1.0 / dim)
    c = jax.random.uniform(k1, (m, dim), dtype)
    a = jnp.full((m,), 1.5 * spacing, dtype)
    w = 0.01 * (jax.random.uniform(k2, (m,), dtype) - 0.5)
    return c, a, w


def time_cycle(m, n, dim, dtype):
    cycle = make_cycle(m, n, dim, dtype)
    c, a, w = initial(m, dim, dtype)
    key = jax.random.PRNGKey(1)
    times = []
    for r in range(WARMUP + RUNS):
        key, sub = jax.random.split(key)
        jax.block_until_ready(sub)
        t0 = time.perf_counter()
        out = cycle(c, a, w, sub)
        jax.block_until_ready(out)
        t1 = time.perf_counter()
        if r >= WARMUP:
            times.append((t1 - t0) * 1e3)
    return statistics.median(times)


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "both"
    jax.config.update("jax_enable_x64", True)
    dtypes = []
    if which in ("double", "both"):
        dtypes.append(("double", jnp.float64))
    if which in ("float", "both"):
        dtypes.append(("float", jnp.float32))
    print(f"## JAX {jax.__version__} jit reference on {jax.devices()[0].device_kind}: ms per cycle, "
          f"median of {RUNS} after {WARMUP} warm-up runs (float matmuls at JAX's default precision)\n")
    print("| dim | precision | m | n | JAX cycle |")
    print("|---|---|---|---|---|")
    for dim in (2, 3):
        for m, n in SIZES:
            for name, dtype in dtypes:
                try:
                    t = f"{time_cycle(m, n, dim, dtype):.3f}"
                except Exception as e:  # out of memory at the largest size, say
                    t = f"failed: {type(e).__name__}"
                print(f"| {dim}D | {name} | {m} | {n} | {t} |", flush=True)


if __name__ == "__main__":
    main()
