package io.github.dblock.autoconfigure;

import java.time.Duration;

import io.github.dblock.engine.LockEngine;

import org.springframework.context.SmartLifecycle;

/**
 * Shuts the lock engine down when the application context closes, after the web server
 * has stopped taking and finishing requests (a lower phase than its graceful shutdown and
 * its stop): waiters are refused at once, holders have the grace period to finish, and the
 * locks still held are then reported lost and deleted (see {@link LockEngine#shutdown}).
 */
final class DbLockShutdown implements SmartLifecycle {

	/**
	 * Below the web server's stop ({@code SmartLifecycle.DEFAULT_PHASE - 2048} in Spring
	 * Boot), so that requests finish with their locks before the engine stops.
	 */
	static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 3072;

	private final LockEngine engine;

	private final Duration gracePeriod;

	private volatile boolean running;

	DbLockShutdown(LockEngine engine, Duration gracePeriod) {
		this.engine = engine;
		this.gracePeriod = gracePeriod;
	}

	@Override
	public void start() {
		this.running = true;
	}

	@Override
	public void stop() {
		this.running = false;
		this.engine.shutdown(this.gracePeriod);
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

}
