package io.github.dblock.actuate;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

import io.github.dblock.engine.LockEngine;
import io.github.dblock.jdbc.FairLockRepository;
import io.github.dblock.jdbc.Lease;
import io.github.dblock.jdbc.LockHistoryRepository;
import io.github.dblock.jdbc.LockRepository;
import io.github.dblock.jdbc.LockRow;
import io.github.dblock.jdbc.ReadWriteLockRepository;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The {@code dblock} actuator endpoint: reads the locks held now in the database (the lease
 * table's rows, the read/write holders and the fair queues' heads), the locks this JVM holds,
 * the keys its threads wait for and, where the lock log is on, its last holds; and
 * force-releases one row of the lease table given its key, owner and token.
 *
 * @since 0.1.0
 */
@Endpoint(id = "dblock")
public class DbLockEndpoint {

	private static final Log logger = LogFactory.getLog(DbLockEndpoint.class);

	/** The most entries of the lock log a read lists. */
	public static final int LOG_SIZE = 50;

	private final LockRepository repository;

	private final LockEngine engine;

	private final int maxRows;

	private final Supplier<List<Migration>> migrations;

	private final @Nullable LockHistoryRepository history;

	/**
	 * Creates the endpoint, which lists no migrations.
	 * @param repository the lock table's repository
	 * @param engine the engine, for the locks this JVM holds
	 * @param maxRows the most rows a read lists
	 */
	public DbLockEndpoint(LockRepository repository, LockEngine engine, int maxRows) {
		this(repository, engine, maxRows, List::of);
	}

	/**
	 * Creates the endpoint.
	 * @param repository the lock table's repository
	 * @param engine the engine, for the locks this JVM holds
	 * @param maxRows the most rows a read lists
	 * @param migrations db-lock's schema migrations and their state, read at each read
	 */
	public DbLockEndpoint(LockRepository repository, LockEngine engine, int maxRows,
			Supplier<List<Migration>> migrations) {
		this(repository, engine, maxRows, migrations, null);
	}

	/**
	 * Creates the endpoint, which lists the lock log's last holds where given its repository.
	 * @param repository the lock table's repository
	 * @param engine the engine, for the locks this JVM holds
	 * @param maxRows the most rows a read lists
	 * @param migrations db-lock's schema migrations and their state, read at each read
	 * @param history the lock log's repository, or {@code null} where the log is off
	 */
	public DbLockEndpoint(LockRepository repository, LockEngine engine, int maxRows,
			Supplier<List<Migration>> migrations, @Nullable LockHistoryRepository history) {
		if (maxRows < 1) {
			throw new IllegalArgumentException("The most rows the endpoint lists must be positive, got " + maxRows);
		}
		this.repository = repository;
		this.engine = engine;
		this.maxRows = maxRows;
		this.migrations = migrations;
		this.history = history;
	}

	/**
	 * The locks held in the database now, whichever node holds them (at most the limit, in
	 * key order): the lease table's rows, the read/write modes' holder rows and the head of
	 * each fair queue, each with its mode; the locks the threads of this JVM hold, the keys
	 * they wait for in this JVM, db-lock's schema migrations (which
	 * {@code /actuator/flyway} does not show) and, where the lock log is on, its last
	 * {@value #LOG_SIZE} holds.
	 * @return the report
	 */
	@ReadOperation
	public LocksReport locks() {
		int limit = this.maxRows + 1;
		List<Row> rows = new ArrayList<>();
		for (LockRow row : this.repository.rows(limit)) {
			rows.add(row("lease", row));
		}
		this.repository.readWriteLocks().ifPresent((locks) -> addReadWrite(locks, limit, rows));
		this.repository.fairQueue().ifPresent((queue) -> addFair(queue, limit, rows));
		// each source read its first rows in key order, so the first of all of them are among those
		rows.sort(Comparator.comparing(Row::key).thenComparing(Row::mode).thenComparing(Row::owner));
		boolean truncated = rows.size() > this.maxRows;
		List<Row> listed = List.copyOf(rows.subList(0, Math.min(rows.size(), this.maxRows)));
		List<Held> held = this.engine.held()
			.stream()
			.map((key) -> new Held(key.key(), key.mode().name().toLowerCase(Locale.ROOT), key.thread(),
					key.heldFor()))
			.toList();
		List<Waiting> waiting = this.engine.waiting()
			.stream()
			.map((key) -> new Waiting(key.key(), key.mode().name().toLowerCase(Locale.ROOT), key.threads()))
			.toList();
		return new LocksReport(listed, truncated, held, waiting, this.migrations.get(), log());
	}

	private @Nullable List<LogEntry> log() {
		if (this.history == null) {
			return null;
		}
		return this.history.latest(LOG_SIZE)
			.stream()
			.map((entry) -> new LogEntry(entry.key(), entry.mode().toLowerCase(Locale.ROOT), entry.owner(), entry.token(),
					entry.acquiredAt(), entry.releasedAt(),
					(entry.outcome() != null) ? entry.outcome().name().toLowerCase(Locale.ROOT) : null))
			.toList();
	}

	private static void addReadWrite(ReadWriteLockRepository locks, int limit, List<Row> rows) {
		List<ReadWriteLockRepository.HolderRow> holders;
		try {
			holders = locks.holders(limit);
		}
		catch (UnsupportedOperationException ex) {
			// a repository of the application's that cannot list them
			return;
		}
		for (ReadWriteLockRepository.HolderRow holder : holders) {
			rows.add(row(holder.writer() ? "write" : "read", holder.row()));
		}
	}

	private static void addFair(FairLockRepository queue, int limit, List<Row> rows) {
		List<FairLockRepository.HeldTicket> holders;
		try {
			holders = queue.holders(limit);
		}
		catch (UnsupportedOperationException ex) {
			return;
		}
		for (FairLockRepository.HeldTicket holder : holders) {
			FairLockRepository.Ticket ticket = holder.ticket();
			rows.add(new Row(ticket.key(), "fair", ticket.owner(), ticket.number(), null, holder.expiresAt()));
		}
	}

	private static Row row(String mode, LockRow row) {
		return new Row(row.key(), mode, row.owner(), row.token(), row.acquiredAt(), row.expiresAt());
	}

	/**
	 * Deletes the lease table's row of a key if its owner and token are the ones given, and
	 * only then (rows of the other modes are not released here): for
	 * a lock whose holder is known to be gone. A holder still running loses its lock (it
	 * finds the row gone at its next renewal or release). Logged at WARN.
	 * @param key the stored key
	 * @param owner the row's owner, as the read lists it
	 * @param token the row's token, as the read lists it
	 * @return {@code released}: whether such a row was deleted
	 */
	@DeleteOperation
	public Map<String, Object> release(@Selector String key, String owner, long token) {
		boolean released = this.repository.release(new Lease(key, owner, token, Instant.EPOCH), Duration.ZERO);
		if (released) {
			logger.warn("Lock '" + key + "' (owner " + owner + ", token " + token
					+ ") force-released through the dblock actuator endpoint");
		}
		else {
			logger.warn("Force-release of lock '" + key + "' (owner " + owner + ", token " + token
					+ ") through the dblock actuator endpoint found no such row; nothing was deleted");
		}
		return Map.of("key", key, "released", released);
	}

	/**
	 * What the read operation returns.
	 * @param rows the locks held in the database, in key order
	 * @param truncated whether the table has more rows than listed
	 * @param heldHere the locks the threads of this JVM hold
	 * @param waitingHere the keys threads of this JVM wait for in this JVM, behind another of
	 * its threads
	 * @param migrations db-lock's schema migrations, in version order
	 * @param log the lock log's last holds, the latest first, or {@code null} where the log
	 * is off
	 */
	public record LocksReport(List<Row> rows, boolean truncated, List<Held> heldHere, List<Waiting> waitingHere,
			List<Migration> migrations, @Nullable List<LogEntry> log) {
	}

	/**
	 * A hold in the lock log.
	 * @param key the stored key
	 * @param mode {@code lease}, {@code transaction}, {@code named}, {@code read},
	 * {@code write} or {@code fair}
	 * @param owner the acquisition's owner id
	 * @param token its fencing token, or {@code null} where none was known when it began
	 * (the transaction and named modes)
	 * @param acquiredAt when it began, by the clock of the JVM that held it
	 * @param endedAt when it ended, or {@code null} while it is held (or until the log is
	 * written: every {@code db-lock.history.flush-interval})
	 * @param outcome {@code released}, {@code expired}, {@code lost} or {@code recovered},
	 * or {@code null} while it is held
	 */
	public record LogEntry(String key, String mode, String owner, @Nullable Long token, Instant acquiredAt,
			@Nullable Instant endedAt, @Nullable String outcome) {
	}

	/**
	 * One of db-lock's schema migrations, from its own history table
	 * ({@code <table>_schema_history}).
	 * @param version its version
	 * @param description what it does
	 * @param state Flyway's state: {@code SUCCESS}, {@code PENDING}, {@code BASELINE}, ...
	 * @param installedOn when it was applied, or {@code null} if it was not
	 */
	public record Migration(String version, String description, String state, @Nullable Instant installedOn) {
	}

	/**
	 * A lock held in the database: a row of the lease table, a reader's or writer's row, or
	 * the head of a fair queue.
	 * @param key the stored key
	 * @param mode {@code lease}, {@code read}, {@code write} or {@code fair}
	 * @param owner the acquisition's owner id
	 * @param token the database's fencing token (a fair queue's ticket number)
	 * @param acquiredAt when it was taken, in the database's time, or {@code null} where the
	 * database does not keep it (the fair mode)
	 * @param expiresAt when its lease ends, in the database's time (possibly past)
	 */
	public record Row(String key, String mode, String owner, long token, @Nullable Instant acquiredAt,
			Instant expiresAt) {
	}

	/**
	 * A lock a thread of this JVM holds.
	 * @param key the stored key
	 * @param mode {@code lease}, {@code transaction}, {@code named}, {@code read} or {@code write}
	 * @param thread the holding thread's name
	 * @param heldFor how long it has been held
	 */
	public record Held(String key, String mode, String thread, Duration heldFor) {
	}

	/**
	 * A key threads of this JVM wait for in this JVM, behind another of its threads that
	 * holds it or asks the database for it (as {@link LockEngine#waiting()} lists it).
	 * @param key the stored key
	 * @param mode {@code lease}, {@code named}, {@code write} or {@code fair}
	 * @param threads how many threads wait, at least one
	 */
	public record Waiting(String key, String mode, int threads) {
	}

}
