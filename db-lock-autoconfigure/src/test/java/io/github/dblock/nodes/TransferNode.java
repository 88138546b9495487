package io.github.dblock.nodes;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.testsupport.Concurrently;

import org.springframework.dao.PessimisticLockingFailureException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * One node, as a process of its own, of the several-keys test: threads that, once every
 * node is ready ({@link SemaphoreNode#awaitNodes}) and for a given time, move random amounts
 * between accounts (rows of a balance, a version and the highest fencing token that wrote
 * it). Each transfer
 * takes its two accounts' keys at once ({@link DbLockTemplate#acquireAll}), named in the
 * caller's random order, then counts itself into each account (a row of holders inside per
 * account, in autocommit on a pool of its own), reads both accounts and writes them back in
 * one transaction: the balance moved, the version read plus one, each fenced by its key's
 * token ({@code fence < token}). Without the locks, two transfers of one account would lose
 * an update (a version short, a balance wrong). Prints {@code transfers}, {@code timeouts}
 * (waits that ran out, as a deadlock between keys would), {@code deadlocks} (the database's
 * deadlocks and lock waits that ran out), {@code overlaps} (an account counted inside by more
 * than one holder), {@code refused} (writes the fence refused), {@code keyOrder} (handles
 * whose keys were not in sorted order), {@code lost} (handles no longer held at release),
 * {@code maxWaitMillis} and {@code startedAt} (the epoch milliseconds at which the node saw
 * every node ready).
 */
public final class TransferNode {

	/** The accounts: id, balance, version (one up per write) and the highest token that wrote it. */
	static final String ACCOUNTS_TABLE = "db_lock_test_accounts";

	/** How many holders are inside each account, counted in autocommit. */
	static final String INSIDE_TABLE = "db_lock_test_account_inside";

	/** How long a transfer waits for its two keys: long enough that none runs out. */
	static final Duration WAIT = Duration.ofSeconds(30);

	private TransferNode() {
	}

	/** An account's lock key. */
	static String key(int account) {
		return "transfer-account-" + account;
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL, user, password, accounts, this node's index, nodes, threads,
	 * duration in milliseconds
	 * @throws Exception on any failure (the exit code is then not 0)
	 */
	public static void main(String[] args) throws Exception {
		int accounts = Integer.parseInt(args[3]);
		int node = Integer.parseInt(args[4]);
		int nodes = Integer.parseInt(args[5]);
		int threads = Integer.parseInt(args[6]);
		long durationNanos = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(args[7]));
		AtomicInteger transfers = new AtomicInteger();
		AtomicInteger timeouts = new AtomicInteger();
		AtomicInteger deadlocks = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		AtomicInteger refused = new AtomicInteger();
		AtomicInteger keyOrder = new AtomicInteger();
		AtomicInteger lost = new AtomicInteger();
		AtomicLong maxWaitNanos = new AtomicLong();
		long startedAt;
		try (HikariDataSource dataSource = NodeSupport.dataSource(args[0], args[1], args[2], threads + 2);
				HikariDataSource data = NodeSupport.dataSource(args[0], args[1], args[2], threads);
				HikariDataSource side = NodeSupport.dataSource(args[0], args[1], args[2], threads);
				LockEngine engine = NodeSupport.engine(dataSource)) {
			DbLockTemplate template = new DbLockTemplate(engine, "", WAIT, Duration.ofSeconds(30));
			JdbcTemplate jdbc = new JdbcTemplate(data);
			JdbcTemplate inside = new JdbcTemplate(side);
			TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(data));
			SemaphoreNode.awaitNodes(inside, "transfers", node, nodes);
			startedAt = System.currentTimeMillis();
			long end = System.nanoTime() + durationNanos;
			Concurrently.run(threads, (thread) -> {
				ThreadLocalRandom random = ThreadLocalRandom.current();
				while (System.nanoTime() - end < 0) {
					int from = random.nextInt(accounts);
					int to = (from + 1 + random.nextInt(accounts - 1)) % accounts;
					long amount = 1 + random.nextInt(100);
					// the caller's order, random: from first or to first
					List<String> keys = random.nextBoolean() ? List.of(key(from), key(to)) : List.of(key(to), key(from));
					long asked = System.nanoTime();
					try (LockHandle both = template.acquireAll(keys, WAIT)) {
						maxWaitNanos.accumulateAndGet(System.nanoTime() - asked, Math::max);
						if (!both.keys().equals(keys.stream().sorted().toList())) {
							keyOrder.incrementAndGet();
						}
						enter(inside, from, overlaps);
						try {
							enter(inside, to, overlaps);
							try {
								boolean written = Boolean.TRUE.equals(transaction.execute((status) -> {
									if (move(jdbc, from, -amount, both.fencingToken(key(from)))
											&& move(jdbc, to, amount, both.fencingToken(key(to)))) {
										return true;
									}
									status.setRollbackOnly();
									return false;
								}));
								if (written) {
									transfers.incrementAndGet();
								}
								else {
									refused.incrementAndGet();
								}
								if (!both.isHeld()) {
									lost.incrementAndGet();
								}
							}
							finally {
								inside.update("UPDATE " + INSIDE_TABLE + " SET inside = inside - 1 WHERE id = ?", to);
							}
						}
						finally {
							inside.update("UPDATE " + INSIDE_TABLE + " SET inside = inside - 1 WHERE id = ?", from);
						}
					}
					catch (LockAcquisitionException ex) {
						timeouts.incrementAndGet();
					}
					catch (PessimisticLockingFailureException ex) {
						deadlocks.incrementAndGet();
						System.err.println("database deadlock or lock wait timeout: " + ex);
					}
				}
			});
		}
		System.out.println("transfers=" + transfers);
		System.out.println("timeouts=" + timeouts);
		System.out.println("deadlocks=" + deadlocks);
		System.out.println("overlaps=" + overlaps);
		System.out.println("refused=" + refused);
		System.out.println("keyOrder=" + keyOrder);
		System.out.println("lost=" + lost);
		System.out.println("maxWaitMillis=" + TimeUnit.NANOSECONDS.toMillis(maxWaitNanos.get()));
		System.out.println("startedAt=" + startedAt);
	}

	/** Counts a holder into an account; more than one inside is an overlap. */
	private static void enter(JdbcTemplate inside, int account, AtomicInteger overlaps) {
		inside.update("UPDATE " + INSIDE_TABLE + " SET inside = inside + 1 WHERE id = ?", account);
		if (inside.queryForObject("SELECT inside FROM " + INSIDE_TABLE + " WHERE id = ?", Integer.class, account) > 1) {
			overlaps.incrementAndGet();
		}
	}

	/**
	 * Reads an account and writes it back with the amount added and its version one up,
	 * fenced by the key's token; whether the fence let the write through.
	 */
	private static boolean move(JdbcTemplate jdbc, int account, long amount, long token) {
		Map<String, Object> row = jdbc.queryForMap("SELECT balance, version FROM " + ACCOUNTS_TABLE + " WHERE id = ?",
				account);
		long balance = ((Number) row.get("balance")).longValue();
		long version = ((Number) row.get("version")).longValue();
		return jdbc.update("UPDATE " + ACCOUNTS_TABLE + " SET balance = ?, version = ?, fence = ? WHERE id = ? AND fence < ?",
				balance + amount, version + 1, token, account, token) == 1;
	}

}
