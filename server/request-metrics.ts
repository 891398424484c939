/**
 * The request counter and latency histogram of /metrics, kept by the server itself. Every answer
 * adds one to a number and one to a bucket of a series found once per label set; the text is
 * made only when /metrics is read, by the same prom-client registry as every other metric (this
 * module hands it the values prom-client's own Counter and Histogram would hand it, so names,
 * help texts, labels, buckets and the order of series stay what prom-client writes:
 * test/unit/server/request-metrics.test.ts diffs the two). prom-client's own counter and
 * histogram hash the labels and check them on every answer, even through `labels()`.
 */
import type { Metric, Registry } from 'prom-client';

type Labels<L extends string> = Record<L, string>;

interface ExportedValue {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName?: string;
  /** Always null on buckets, as prom-client's histogram has it without exemplars. */
  exemplar?: null;
}

interface Exported {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  values: ExportedValue[];
  aggregator: 'sum';
}

interface Config<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  registers: Registry[];
}

/** One series of a counter: `inc()` adds one. Shows in the text once it has been counted. */
export interface CounterSeries {
  inc(): void;
}

/** One series of a histogram: `observe(seconds)`. Shows in the text once it has observed a value. */
export interface HistogramSeries {
  observe(value: number): void;
}

abstract class OwnMetric<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  readonly aggregator = 'sum' as const;
  /** The series made so far, by their label values: asking twice for one label set gives one series. */
  readonly #byKey = new Map<string, unknown>();

  constructor(config: Config<L>) {
    this.name = config.name;
    this.help = config.help;
    this.labelNames = config.labelNames;
    for (const registry of config.registers) registry.registerMetric(this as unknown as Metric);
  }

  /** The series' labels in the label names' order (prom-client writes them in the order it was given them). */
  protected ordered(labels: Labels<L>): Labels<L> {
    const copy = {} as Labels<L>;
    for (const name of this.labelNames) copy[name] = labels[name];
    return copy;
  }

  /** The state of the series with these labels, made by `make` the first time. */
  protected stateOf<S>(labels: Labels<L>, make: (ordered: Labels<L>) => S): S {
    const ordered = this.ordered(labels);
    const key = JSON.stringify(this.labelNames.map((name) => ordered[name]));
    let state = this.#byKey.get(key) as S | undefined;
    if (state === undefined) this.#byKey.set(key, (state = make(ordered)));
    return state;
  }

  abstract get(): Promise<Exported>;
  abstract reset(): void;
}

class CounterState {
  value = 0;
  listed = false;
  constructor(readonly labels: Record<string, string>) {}
}

/** A counter with labels, written as prom-client's Counter writes one. */
export class RequestCounter<L extends string> extends OwnMetric<L> {
  readonly type = 'counter' as const;
  #listed: CounterState[] = [];

  /** The series of these labels: look it up once and keep it (nothing is hashed when it counts). */
  series(labels: Labels<L>): CounterSeries {
    const state = this.stateOf(labels, (ordered) => new CounterState(ordered));
    return {
      inc: () => {
        if (!state.listed) {
          state.listed = true;
          this.#listed.push(state);
        }
        state.value += 1;
      },
    };
  }

  async get(): Promise<Exported> {
    return {
      help: this.help,
      name: this.name,
      type: this.type,
      values: this.#listed.map((s) => ({ value: s.value, labels: s.labels })),
      aggregator: this.aggregator,
    };
  }

  reset(): void {
    for (const state of this.#listed) {
      state.listed = false;
      state.value = 0;
    }
    this.#listed = [];
  }
}

class HistogramState {
  /** Observations per bucket (not cumulative): counts[i] for values in (bounds[i - 1], bounds[i]]. */
  readonly counts: number[];
  sum = 0;
  count = 0;
  listed = false;
  constructor(
    readonly labels: Record<string, string>,
    buckets: number,
  ) {
    this.counts = new Array<number>(buckets).fill(0);
  }
}

/** A histogram with labels, written as prom-client's Histogram writes one. */
export class RequestHistogram<L extends string> extends OwnMetric<L> {
  readonly type = 'histogram' as const;
  readonly buckets: readonly number[];
  #listed: HistogramState[] = [];

  constructor(config: Config<L> & { buckets: readonly number[] }) {
    super(config);
    this.buckets = [...config.buckets];
  }

  /** The series of these labels: look it up once and keep it (nothing is hashed when it observes). */
  series(labels: Labels<L>): HistogramSeries {
    const state = this.stateOf(labels, (ordered) => new HistogramState(ordered, this.buckets.length));
    const bounds = this.buckets;
    return {
      observe: (value: number) => {
        // prom-client refuses such a value with an exception; an answer's duration is never one.
        if (!Number.isFinite(value)) return;
        if (!state.listed) {
          state.listed = true;
          this.#listed.push(state);
        }
        state.sum += value;
        state.count += 1;
        for (let i = 0; i < bounds.length; i++) {
          if (value <= bounds[i]!) {
            state.counts[i]! += 1;
            break;
          }
        }
      },
    };
  }

  /** What the registry writes: each bucket's `le` beside the series' labels, as prom-client hands them over. */
  async getForPromString(): Promise<Exported> {
    const bucketName = `${this.name}_bucket`;
    const values: ExportedValue[] = [];
    for (const state of this.#listed) {
      let cumulative = 0;
      for (let i = 0; i < this.buckets.length; i++) {
        cumulative += state.counts[i]!;
        values.push({
          labels: { le: this.buckets[i]! },
          sharedLabels: state.labels,
          value: cumulative,
          exemplar: null,
          metricName: bucketName,
        });
      }
      values.push({
        labels: { le: '+Inf' },
        sharedLabels: state.labels,
        value: state.count,
        metricName: bucketName,
        exemplar: null,
      });
      values.push({ labels: {}, sharedLabels: state.labels, value: state.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: state.labels, value: state.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The same values with each one's labels in one object (prom-client's `get()`, for getMetricsAsJSON). */
  async get(): Promise<Exported> {
    const exported = await this.getForPromString();
    exported.values = exported.values.map(({ labels, sharedLabels, ...rest }) => ({
      ...rest,
      labels: { ...labels, ...sharedLabels },
    }));
    return exported;
  }

  reset(): void {
    for (const state of this.#listed) {
      state.listed = false;
      state.sum = 0;
      state.count = 0;
      state.counts.fill(0);
    }
    this.#listed = [];
  }
}
