import { Context, Metric } from "effect"
import { beforeAll } from "vitest"

/**
 * Vitest setup: each test file starts with effect's default metric registry empty, as it would in a worker of its
 * own. The suite runs without per-file isolation (vitest.config.ts), so the registry would otherwise hold every
 * series of every earlier file in the worker (property tests name thousands of extensions), and every OTLP metrics
 * export and snapshot reads them all: otel-hostile took 23 s of CPU after three other files and 1.5 s alone. Series
 * are looked up on every update, so nothing holds a stale one; files run one at a time in a worker, and each compares
 * metrics as deltas within itself.
 */
beforeAll(() => {
  Context.get(Context.empty(), Metric.MetricRegistry).clear()
})
