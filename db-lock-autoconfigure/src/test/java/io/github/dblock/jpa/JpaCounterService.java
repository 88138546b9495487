package io.github.dblock.jpa;

import java.util.concurrent.Callable;

import io.github.dblock.DbLock;
import io.github.dblock.DbLockMode;
import io.github.dblock.support.DbLockTemplate;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * A JPA service under {@code @DbLock}, as most Spring Boot services are: the lock's advice
 * runs outside the {@code JpaTransactionManager}'s transaction, and the work inside reads
 * and writes through Hibernate.
 */
@Service
public class JpaCounterService {

	private final JpaCounterRepository counters;

	private final DbLockTemplate locks;

	public JpaCounterService(JpaCounterRepository counters, DbLockTemplate locks) {
		this.counters = counters;
		this.locks = locks;
	}

	/** Read-modify-write of a counter through Hibernate: exact only under the lock. */
	@DbLock(key = "'jpa-counter-' + #id", waitMs = 120_000)
	@Transactional
	public void increment(long id) {
		this.counters.findById(id).orElseThrow().increment();
	}

	/**
	 * The same increment under a lock of the transaction mode: a row lock taken on the JPA
	 * transaction's own connection, ended by its commit.
	 */
	@Transactional
	@DbLock(mode = DbLockMode.TRANSACTION, key = "'jpa-row-' + #id", waitMs = 120_000)
	public void incrementUnderRowLock(long id) {
		this.counters.findById(id).orElseThrow().increment();
	}

	/**
	 * Increments under the lock, then runs {@code meanwhile} (what happens elsewhere while
	 * the transaction is open) before the transaction commits.
	 */
	@DbLock(key = "'jpa-counter-' + #id", waitMs = 120_000)
	@Transactional
	public void incrementThen(long id, Runnable meanwhile) {
		this.counters.findById(id).orElseThrow().increment();
		meanwhile.run();
	}

	/** Increments, then fails: the transaction rolls back. */
	@DbLock(key = "'jpa-counter-' + #id")
	@Transactional
	public void incrementThenFail(long id) {
		this.counters.findById(id).orElseThrow().increment();
		this.counters.flush();
		throw new IllegalStateException("failed after the increment");
	}

	/** Runs {@code work} inside a JPA transaction that is open already. */
	@Transactional
	public <T> T inTransaction(Callable<T> work) throws Exception {
		this.counters.count();
		return work.call();
	}

	/** Takes a lock through the template inside a read-only JPA transaction. */
	@Transactional(readOnly = true)
	public long readUnderLock(long id) {
		return this.locks.execute("jpa-read-" + id, () -> this.counters.findById(id).orElseThrow().getCounterValue());
	}

}
