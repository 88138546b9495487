package io.github.dblock.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

import io.github.dblock.jdbc.dialect.ReadWriteStatements;
import io.github.dblock.jdbc.dialect.SqlDialect;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.RowCallbackHandler;

/**
 * {@link ReadWriteLockRepository} over JDBC, on the connections, statement timeout and error
 * handling of a {@link JdbcLockRepository}: each operation takes one pooled connection of its
 * own and runs its statements in autocommit, each committed before the next starts (but for
 * those sent together in one transaction, see below). Its attempts to take a key are
 * {@link JdbcReadAttempts} and {@link JdbcWriteAttempts}.
 * <ul>
 * <li>read: an {@code INSERT ... SELECT} of the reader's row unless a writer's intent is
 * live, then a {@code SELECT} of its token and end and of whether a writer holds or waits
 * (a {@code DELETE} of the row, then, in the rare race with a writer that announced itself
 * meanwhile): 2 statements, 1 round trip on MariaDB (sent in sequence, see below) and on
 * PostgreSQL (1 statement, see below);</li>
 * <li>write: the intent (an {@code INSERT} that does nothing on a key that has one, or an
 * {@code UPDATE} that renews this writer's or takes an expired one; on MariaDB and
 * PostgreSQL one statement, {@code ON DUPLICATE KEY UPDATE}, {@code ON CONFLICT DO UPDATE}), then an
 * {@code INSERT ... SELECT} of the writer's row if the intent is this writer's and the key
 * has no holder row, live or ended, returning its token and end ({@code RETURNING}, H2's
 * {@code FINAL TABLE}; a {@code SELECT} after on MySQL): 2 statements when free (3 on MySQL;
 * 1 round trip on MariaDB, whose claim is one statement, and on PostgreSQL),
 * 3 per attempt while waiting (a {@code SELECT} of ended holder rows after a refused insert);</li>
 * <li>ended rows: a holder row whose lease has ended is not passed over. A writer's refused
 * insert, or a reader's check that finds only an ended writer's row (on PostgreSQL a
 * reader's refused insert with no live intent), reads their owners and
 * then, on a connection of its own, deletes them by primary key, in a {@code DELETE} that
 * waits for a renewal of such a row that the database is still writing (checked before the
 * lease ended, committing after it) and leaves the row if it committed; then it tries once
 * more. A delete that fails (a renewal whose commit stalls past the statement timeout) is
 * "not acquired yet";</li>
 * <li>a refused attempt (a live intent of another owner) marks that intent as wanted: 1
 * statement more;</li>
 * <li>release: a reader's row, 1 statement; a writer's row and intent, 1 (2 on H2); a
 * writer's row, its intent left ended for the next writer of its JVM, 2; a cede at the end of
 * a local turn, 1 if the key was not wanted, 2 if it was;</li>
 * <li>renewal of many holders at once: 2 statements, 3 with writers among them.</li>
 * </ul>
 * On H2 a reader's and a writer's insert write a placeholder token (see
 * {@link ReadWriteStatements}): a writer's is drawn after it in one transaction, 1 statement
 * more; a reader's by the statement that checks it, after its row has committed.
 * A writer's row is inserted only when its intent still has half its lease left, and that
 * intent was renewed by the statement before: elsewhere than on PostgreSQL (see below), where
 * the intent is what keeps a reader from holding beside a writer, a reader that judged it
 * expired would have to
 * run after a writer's statement that took longer than half the lease (far longer than the
 * statement timeout with any sensible lease).
 * <p>
 * Where the dialect sends statements {@linkplain io.github.dblock.jdbc.dialect.SqlSyntax#sentInSequence
 * in sequence} (MariaDB: an anonymous compound statement), the reader's insert and its check,
 * and the writer's claim and insert, each go in one round trip, every statement committed
 * before the next starts: the same statements, commits and order as in round trips of their
 * own. A read and a write are then 1 round trip each, with a release of 1.
 * <p>
 * Where the dialect sends statements together with the key's token-order lock (PostgreSQL,
 * {@link ReadWriteStatements#insertReaderTogether()}), every insert of the key's holders
 * takes that lock before its snapshot and holds it until it commits, so each insert sees
 * every holder row inserted before it: the reader's insert checks for writer rows itself,
 * and the writer's intent is claimed in the insert's transaction. A read is then 1 round
 * trip, a write 1 when free, each with a release of 1: the lease mode's 2. The intent keeps
 * new readers out (a writer is not starved); it is no longer what keeps them from holding
 * beside a writer.
 *
 * @since 0.1.0
 */
public class JdbcReadWriteLockRepository implements ReadWriteLockRepository {

	private final LockConnections connections;

	private final ReadWriteStatements sql;

	private final JdbcReadAttempts reads;

	private final JdbcWriteAttempts writes;

	/**
	 * Creates a repository.
	 * @param connections the lock connections, with the dialect and the statement timeout
	 */
	public JdbcReadWriteLockRepository(LockConnections connections) {
		this.connections = connections;
		this.sql = connections.dialect().readWriteStatements();
		this.reads = new JdbcReadAttempts(connections, this.sql);
		this.writes = new JdbcWriteAttempts(connections, this.sql);
	}

	@Override
	public Optional<Lease> tryRead(String key, String owner, Duration lease) {
		return this.reads.tryRead(key, owner, lease);
	}

	@Override
	public WriteAttempt tryWrite(String key, String owner, Duration lease, boolean again) {
		return this.writes.tryWrite(key, owner, lease, again);
	}

	@Override
	public int withdraw(String key, String owner) {
		return this.connections.retryingContention(() -> this.connections.onOwnConnection((jdbc) -> {
			jdbc.update(this.sql.deleteIntent(), key, owner);
			// a holder's row whose insert committed although its reply was lost
			return jdbc.update(this.sql.deleteHolder(), key, owner);
		}));
	}

	@Override
	public boolean release(Lease lease, boolean writer) {
		return this.connections.retryingContention(() -> this.connections.onOwnConnection((jdbc) -> {
			if (writer && this.sql.releaseWriter() != null) {
				if (jdbc.update(this.sql.releaseWriter(), this.sql.releaseWriterParameters(lease.key(), lease.owner(), lease.token())) > 0) {
					return true;
				}
				// the writer's row was gone (a multi-table delete then deletes nothing): its intent may not be
				jdbc.update(this.sql.deleteIntent(), lease.key(), lease.owner());
				return false;
			}
			boolean held = jdbc.update(this.sql.releaseHolder(), lease.key(), lease.owner(), lease.token()) == 1;
			if (writer) {
				jdbc.update(this.sql.deleteIntent(), lease.key(), lease.owner());
			}
			return held;
		}));
	}

	@Override
	public boolean handOver(Lease lease) {
		// each statement runs once: a retry after the first committed must not read its row gone as lost
		AtomicReference<@Nullable Boolean> held = new AtomicReference<>();
		return this.connections.retryingContention(() -> this.connections.onOwnConnection((jdbc) -> {
			if (held.get() == null) {
				held.set(jdbc.update(this.sql.releaseHolder(), lease.key(), lease.owner(), lease.token()) == 1);
			}
			jdbc.update(this.sql.expireIntent(), lease.key(), lease.owner());
			return Objects.requireNonNull(held.get());
		}));
	}

	@Override
	public boolean cede(Lease lease, Duration wantedWithin) {
		// each statement runs once: a retry after the cede committed must not read its row gone as not ceded
		AtomicReference<@Nullable Boolean> ceded = new AtomicReference<>();
		return this.connections.retryingContention(() -> this.connections.onOwnConnection((jdbc) -> {
			if (ceded.get() == null) {
				ceded.set(jdbc.update(this.sql.cedeWriter(), lease.key(), lease.owner(), -SqlDialect.micros(wantedWithin),
						lease.key(), lease.owner(), lease.token()) == 1);
			}
			if (!Objects.requireNonNull(ceded.get())) {
				return false;
			}
			jdbc.update(this.sql.deleteIntent(), lease.key(), lease.owner());
			return true;
		}));
	}

	@Override
	public Optional<Instant> renew(Lease lease, Duration duration, boolean writer) {
		long micros = SqlDialect.micros(duration);
		return this.connections.retryingContention(() -> this.connections.onOwnConnection((jdbc) -> {
			if (jdbc.update(this.sql.renewHolder(), micros, lease.key(), lease.owner(), lease.token()) == 0) {
				return Optional.<Instant>empty();
			}
			if (writer) {
				// keeps new readers out without a check of the writer's row
				jdbc.update(this.sql.renewIntent(), micros, lease.key(), lease.owner());
			}
			return jdbc
				.query(this.sql.selectHolder(), (rs, i) -> this.sql.readInstant(rs, "expires_at"), lease.key(),
						lease.owner())
				.stream()
				.findFirst();
		}));
	}

	/**
	 * One {@code UPDATE} of the holders' rows (on PostgreSQL returning their new ends), one of
	 * the writers' intents if there are writers, and a {@code SELECT} of the new ends
	 * elsewhere: 2 or 3 statements for any number of leases.
	 */
	@Override
	public List<Optional<Instant>> renewAll(List<Lease> leases, Duration duration, Set<String> writers) {
		if (leases.size() == 1) {
			return List.of(renew(leases.get(0), duration, writers.contains(leases.get(0).owner())));
		}
		int count = leases.size();
		Object[] heldBy = new Object[count * 3];
		for (int i = 0; i < count; i++) {
			heldBy[i] = leases.get(i).key();
			heldBy[count + i] = leases.get(i).owner();
			heldBy[2 * count + i] = leases.get(i).token();
		}
		Object[] parameters = new Object[heldBy.length + 1];
		parameters[0] = SqlDialect.micros(duration);
		System.arraycopy(heldBy, 0, parameters, 1, heldBy.length);
		List<Lease> writerLeases = leases.stream().filter((lease) -> writers.contains(lease.owner())).toList();
		// not retried here: the watchdog tries again at its next sweep, each lease alone
		Map<String, Instant> ends = this.connections.onOwnConnection((jdbc) -> {
			Map<String, Instant> renewed = new HashMap<>();
			RowCallbackHandler end = (rs) -> renewed.put(rs.getString("owner"), this.sql.readInstant(rs, "expires_at"));
			if (this.sql.updateReturns()) {
				jdbc.query(this.sql.renewHolders(count) + " RETURNING owner, expires_at", end, parameters);
			}
			else if (jdbc.update(this.sql.renewHolders(count), parameters) > 0) {
				jdbc.query(this.sql.selectHolders(count), end, heldBy);
			}
			List<Lease> held = writerLeases.stream().filter((lease) -> renewed.containsKey(lease.owner())).toList();
			if (!held.isEmpty()) {
				Object[] intentParameters = new Object[held.size() * 2 + 1];
				intentParameters[0] = SqlDialect.micros(duration);
				for (int i = 0; i < held.size(); i++) {
					intentParameters[1 + i] = held.get(i).key();
					intentParameters[1 + held.size() + i] = held.get(i).owner();
				}
				jdbc.update(this.sql.renewIntents(held.size()), intentParameters);
			}
			return renewed;
		});
		List<Optional<Instant>> renewed = new ArrayList<>(count);
		for (Lease lease : leases) {
			renewed.add(Optional.ofNullable(ends.get(lease.owner())));
		}
		return renewed;
	}

	/**
	 * On a multi-primary cluster (Galera, group replication in multi-primary mode) a reader's
	 * row and a writer's intent are different rows, which certification does not set against
	 * each other, and a node may check before the other node's row has arrived.
	 */
	@Override
	public @Nullable String unavailable() {
		return this.connections
			.onOwnConnection((jdbc) -> Optional.ofNullable(this.connections.dialect().inspection().multiPrimaryCluster(jdbc)))
			.map((cluster) -> cluster + ", where a reader and a writer on different nodes write different rows, "
					+ "which the cluster does not certify against each other, and each may check before the other's "
					+ "row arrived: both could hold the key")
			.orElse(null);
	}

	@Override
	public int deleteExpired(int limit) {
		return this.connections.retryingContention(() -> this.connections.onOwnConnection(
				(jdbc) -> jdbc.update(this.sql.deleteExpiredHolders(), limit)
						+ jdbc.update(this.sql.deleteExpiredIntents(), limit)));
	}

	@Override
	public List<HolderRow> holders(int limit) {
		return this.connections.onOwnConnection((jdbc) -> jdbc.query(this.sql.holdersSql(),
				(rs, i) -> new HolderRow(new LockRow(rs.getString("lock_key"), rs.getString("owner"), rs.getLong("token"),
						this.sql.readInstant(rs, "acquired_at"), this.sql.readInstant(rs, "expires_at")),
						"W".equals(rs.getString("kind"))),
				limit));
	}


	@Override
	public String toString() {
		return "JdbcReadWriteLockRepository[" + this.connections.dialect() + "]";
	}

}
