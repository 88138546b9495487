package io.github.dblock.actuate;

import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.github.dblock.DbLockMode;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * db-lock's Micrometer meters, fed by a {@link LockEngine}'s events. Tags are lowercase:
 * {@code name} (see {@link LockNameTag}, at most a limit of distinct values, then
 * {@value #OTHER}), {@code mode} ({@code lease}, {@code transaction}, {@code named}, {@code read},
 * {@code write}).
 * <ul>
 * <li>{@value #ACQUIRE} (timer): each acquisition call, re-entries included, with
 * {@code outcome} {@code acquired}, {@code timed_out} or {@code failed};</li>
 * <li>{@value #HELD} (timer): how long a thread held a lock, from acquisition to release;</li>
 * <li>{@value #LOST} (counter): locks found lost while held;</li>
 * <li>{@value #CONTENDED} (counter): attempts that found the key held by another owner and
 * were retried after a back-off;</li>
 * <li>{@value #HELD_COUNT} (gauge): locks the threads of this JVM hold now;</li>
 * <li>{@value #WAITING} (gauge): threads of this JVM waiting behind another of its threads
 * for a key;</li>
 * <li>{@value #REAPED} (counter): expired rows the reaper deleted.</li>
 * </ul>
 * Bound to every registry Spring Boot gives it as a {@link MeterBinder}; events before
 * that are not counted.
 *
 * @since 0.1.0
 */
public class DbLockMetrics implements LockListener, MeterBinder {

	/** The timer of acquisition calls. */
	public static final String ACQUIRE = "db.lock.acquire";

	/** The timer of holds. */
	public static final String HELD = "db.lock.held";

	/** The counter of lost locks. */
	public static final String LOST = "db.lock.lost";

	/** The counter of contention retries. */
	public static final String CONTENDED = "db.lock.contended";

	/** The gauge of locks held now. */
	public static final String HELD_COUNT = "db.lock.held.count";

	/** The gauge of local waiters. */
	public static final String WAITING = "db.lock.waiting";

	/** The counter of rows the reaper deleted. */
	public static final String REAPED = "db.lock.reaped";

	/** The {@code name} tag of keys past the limit of distinct names. */
	public static final String OTHER = "other";

	private final LockEngine engine;

	private final LockNameTag nameTag;

	private final int maxNames;

	private final Set<String> names = ConcurrentHashMap.newKeySet();

	private final List<Bound> registries = new CopyOnWriteArrayList<>();

	/**
	 * Creates the meters' source; add it to the engine (and the reaper) as a listener.
	 * @param engine the engine, whose held locks and waiters the gauges read
	 * @param nameTag the {@code name} tag of a key
	 * @param maxNames the most distinct {@code name} tags; keys of further names are
	 * tagged {@value #OTHER}
	 */
	public DbLockMetrics(LockEngine engine, LockNameTag nameTag, int maxNames) {
		if (maxNames < 1) {
			throw new IllegalArgumentException("The most distinct lock names must be positive, got " + maxNames);
		}
		this.engine = engine;
		this.nameTag = nameTag;
		this.maxNames = maxNames;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		Gauge.builder(HELD_COUNT, this.engine, (engine) -> engine.held().size())
			.description("Locks the threads of this JVM hold now")
			.register(registry);
		Gauge.builder(WAITING, this.engine, LockEngine::localWaiters)
			.description("Threads of this JVM waiting for a key another of its threads holds or asks for")
			.register(registry);
		this.registries.add(new Bound(registry));
	}

	@Override
	public void acquired(String key, DbLockMode mode, long waitedNanos) {
		acquisition(key, mode, "acquired", waitedNanos);
	}

	@Override
	public void notAcquired(String key, DbLockMode mode, Outcome outcome, long waitedNanos) {
		acquisition(key, mode, outcome.name().toLowerCase(Locale.ROOT), waitedNanos);
	}

	private void acquisition(String key, DbLockMode mode, String outcome, long nanos) {
		if (this.registries.isEmpty()) {
			return;
		}
		Tags tags = tags(key, mode).and("outcome", outcome);
		for (Bound bound : this.registries) {
			bound.acquire.withTags(tags).record(nanos, TimeUnit.NANOSECONDS);
		}
	}

	@Override
	public void released(String key, DbLockMode mode, long heldNanos) {
		if (this.registries.isEmpty()) {
			return;
		}
		Tags tags = tags(key, mode);
		for (Bound bound : this.registries) {
			bound.held.withTags(tags).record(heldNanos, TimeUnit.NANOSECONDS);
		}
	}

	@Override
	public void lost(String key, DbLockMode mode) {
		if (this.registries.isEmpty()) {
			return;
		}
		Tags tags = tags(key, mode);
		for (Bound bound : this.registries) {
			bound.lost.withTags(tags).increment();
		}
	}

	@Override
	public void contended(String key, DbLockMode mode) {
		if (this.registries.isEmpty()) {
			return;
		}
		Tags tags = tags(key, mode);
		for (Bound bound : this.registries) {
			bound.contended.withTags(tags).increment();
		}
	}

	@Override
	public void reaped(int rows) {
		for (Bound bound : this.registries) {
			bound.reaped.increment(rows);
		}
	}

	private Tags tags(String key, DbLockMode mode) {
		return Tags.of("name", name(key), "mode", mode.name().toLowerCase(Locale.ROOT));
	}

	/** The key's tag, or {@value #OTHER} once the limit of distinct names is reached. */
	private String name(String key) {
		String name = this.nameTag.tag(key);
		if (this.names.contains(name)) {
			return name;
		}
		synchronized (this.names) {
			if (this.names.size() < this.maxNames) {
				this.names.add(name);
				return name;
			}
		}
		return OTHER;
	}

	/** The meters of one registry. */
	private static final class Bound {

		final Meter.MeterProvider<Timer> acquire;

		final Meter.MeterProvider<Timer> held;

		final Meter.MeterProvider<Counter> lost;

		final Meter.MeterProvider<Counter> contended;

		final Counter reaped;

		Bound(MeterRegistry registry) {
			this.acquire = Timer.builder(ACQUIRE)
				.description("Calls that acquire a db-lock, by outcome")
				.withRegistry(registry);
			this.held = Timer.builder(HELD).description("How long a thread held a db-lock").withRegistry(registry);
			this.lost = Counter.builder(LOST)
				.description("db-locks found lost while held")
				.withRegistry(registry);
			this.contended = Counter.builder(CONTENDED)
				.description("Attempts that found a db-lock held by another owner and were retried")
				.withRegistry(registry);
			this.reaped = Counter.builder(REAPED)
				.description("Expired rows of the lock table the reaper deleted")
				.register(registry);
		}

	}

}
