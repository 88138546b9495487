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
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import io.github.dblock.jdbc.dialect.OneTransaction;
import io.github.dblock.jdbc.dialect.ReadWriteStatements;
import io.github.dblock.jdbc.dialect.SqlDialect;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.jdbc.core.RowCallbackHandler;
import org.springframework.jdbc.core.RowMapper;

/**
 * {@link ReadWriteLockRepository} over JDBC, on the connections, statement timeout and error
 * handling of a {@link JdbcLockRepository}: each operation takes one pooled connection of its
 * own and runs its statements in autocommit, each committed before the next is sent.
 * <ul>
 * <li>read: an {@code INSERT ... SELECT} of the reader's row unless a writer's intent is
 * live, then a {@code SELECT} of its token and end and of whether a writer holds or waits
 * (a {@code DELETE} of the row, then, in the rare race with a writer that announced itself
 * meanwhile): 2 statements, 1 round trip on MariaDB (sent in sequence, see below) and on
 * PostgreSQL (1 statement, see below);</li>
 * <li>write: the intent (an {@code INSERT} that does nothing on a key that has one, or an
 * {@code UPDATE} that renews this writer's or takes an expired one), then an
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

	private static final Log logger = LogFactory.getLog(JdbcReadWriteLockRepository.class);

	private final LockConnections connections;

	private final ReadWriteStatements sql;

	/** A row of {@link ReadWriteStatements#checkReader()}. */
	private final RowMapper<Checked> checked;

	/**
	 * Creates a repository.
	 * @param connections the lock connections, with the dialect and the statement timeout
	 */
	public JdbcReadWriteLockRepository(LockConnections connections) {
		this.connections = connections;
		this.sql = connections.dialect().readWriteStatements();
		this.checked = (rs, i) -> new Checked(rs.getLong("token"), this.sql.readInstant(rs, "expires_at"),
				rs.getInt("blocked"));
	}

	@Override
	public Optional<Lease> tryRead(String key, String owner, Duration lease) {
		try {
			return (this.sql.insertReaderTogether() != null) ? readTogether(key, owner, lease)
					: readThenCheck(key, owner, lease);
		}
		catch (DataAccessException ex) {
			if (!this.connections.isContention(ex)) {
				throw ex;
			}
			logger.debug("Attempt to read '" + key + "' did not acquire: " + ex.getMessage());
			// the insert rolled back, unless it committed and its reply was lost
			deleteQuietly(key, owner);
			return Optional.empty();
		}
	}

	/** The read where the reader's row is checked against writers after its insert commits. */
	private Optional<Lease> readThenCheck(String key, String owner, Duration lease) {
		AtomicReference<@Nullable List<String>> endedWriters = new AtomicReference<>();
		Optional<Lease> read = this.connections.onOwnConnection((jdbc) -> {
			List<Checked> checked = insertAndCheckReader(jdbc, key, owner, lease);
			if (checked == null) {
				markWanted(jdbc, key, owner);
				return Optional.empty();
			}
			boolean endedWriter = (this.sql.drawReaderToken() != null) ? checked.isEmpty()
					: !checked.isEmpty() && checked.get(0).blocked() == Checked.ENDED_WRITER;
			if (endedWriter) {
				List<String> ended = jdbc.queryForList(this.sql.endedWriters(), String.class, key);
				if (!ended.isEmpty()) {
					// the reader's row stays while the ended writer's is deleted
					endedWriters.set(ended);
					return Optional.empty();
				}
			}
			return readOrWithdraw(jdbc, key, owner, checked);
		});
		List<String> ended = endedWriters.get();
		if (ended == null) {
			return read;
		}
		return readAfterDeletingEndedWriters(key, owner, () -> false, (jdbc) -> {
			deleteEnded(jdbc, key, ended);
			return readOrWithdraw(jdbc, key, owner, checkReader(jdbc, key, owner));
		});
	}

	/**
	 * The read where the reader's insert is sent together with the key's token-order lock: 1
	 * round trip when it takes the key. Refused, it marks a live intent as wanted; if there
	 * was none, a writer row blocked it: ended ones are deleted and the insert sent once more.
	 */
	private Optional<Lease> readTogether(String key, String owner, Duration lease) {
		AtomicReference<List<String>> endedWriters = new AtomicReference<>(List.of());
		Optional<Lease> read = this.connections.onOwnConnection((jdbc) -> {
			Optional<Lease> inserted = insertReaderTogether(jdbc, key, owner, lease);
			if (inserted.isEmpty() && !markWanted(jdbc, key, owner)) {
				endedWriters.set(jdbc.queryForList(this.sql.endedWriters(), String.class, key));
			}
			return inserted;
		});
		List<String> ended = endedWriters.get();
		if (ended.isEmpty()) {
			return read;
		}
		boolean[] inserting = { false };
		return readAfterDeletingEndedWriters(key, owner, () -> inserting[0], (jdbc) -> {
			deleteEnded(jdbc, key, ended);
			inserting[0] = true;
			return insertReaderTogether(jdbc, key, owner, lease);
		});
	}

	/**
	 * Deletes a key's ended writer rows and reads once more, on a connection of its own, so
	 * that a delete that timed out is cancelled on the server. A statement that waited past
	 * the statement timeout (a delete waiting for a renewal whose commit stalls) is "not yet":
	 * the reader's row, which may have committed, is withdrawn. An insert of the reader's row
	 * that the client gave up on (its network timeout) may still commit after that
	 * withdrawal: its failure goes to the caller, whose clean-up of unknown outcomes
	 * withdraws the row later.
	 * @param inserting whether {@code deleteAndRead} has sent the reader's insert
	 */
	private Optional<Lease> readAfterDeletingEndedWriters(String key, String owner, BooleanSupplier inserting,
			Function<JdbcOperations, Optional<Lease>> deleteAndRead) {
		try {
			return this.connections.onOwnConnection(deleteAndRead);
		}
		catch (DataAccessException ex) {
			if (!this.connections.waitedTooLong(ex) || (inserting.getAsBoolean() && this.connections.clientGaveUp(ex))) {
				throw ex;
			}
			logger.debug("Ended writer of '" + key + "' not deleted: " + ex.getMessage());
			try {
				this.connections.onOwnConnection((jdbc) -> jdbc.update(this.sql.deleteHolder(), key, owner));
			}
			catch (DataAccessException withdrawal) {
				// the reader's row is left: it ends with its lease, or the caller's clean-up of unknown outcomes
				ex.addSuppressed(withdrawal);
				throw ex;
			}
			return Optional.empty();
		}
	}

	private Optional<Lease> insertReaderTogether(JdbcOperations jdbc, String key, String owner, Duration lease) {
		List<Lease> inserted = new ArrayList<>(1);
		OneTransaction.sendTogether(jdbc, Objects.requireNonNull(this.sql.insertReaderTogether()),
				this.sql.insertReaderTogetherParameters(key, owner, SqlDialect.micros(lease)), (rs) -> {
				}, (rs) -> inserted.add(new Lease(key, owner, rs.getLong("token"), this.sql.readInstant(rs, "expires_at"))));
		return inserted.stream().findFirst();
	}

	/**
	 * Inserts the reader's row, then checks it: in one round trip where the dialect sends
	 * them {@linkplain ReadWriteStatements#insertAndCheckReader() in sequence}.
	 * @return the check, or {@code null} if the insert was refused (in sequence: if the
	 * check found no row of the reader's, its lease having ended at once or never begun)
	 */
	private @Nullable List<Checked> insertAndCheckReader(JdbcOperations jdbc, String key, String owner, Duration lease) {
		long micros = SqlDialect.micros(lease);
		String inSequence = this.sql.insertAndCheckReader();
		if (inSequence == null) {
			if (jdbc.update(this.sql.insertReader(), this.sql.insertReaderParameters(key, owner, micros)) == 0) {
				return null;
			}
			return checkReader(jdbc, key, owner);
		}
		List<Checked> checked = new ArrayList<>(1);
		OneTransaction.sendTogether(jdbc, inSequence, this.sql.insertAndCheckReaderParameters(key, owner, micros),
				(rs) -> checked.add(this.checked.mapRow(rs, 0)));
		return checked.isEmpty() ? null : checked;
	}

	/** The reader's lease if its check found no writer, else withdraws its row. */
	private Optional<Lease> readOrWithdraw(JdbcOperations jdbc, String key, String owner, List<Checked> checked) {
		if (checked.isEmpty() || checked.get(0).blocked() != Checked.FREE) {
			// a writer announced itself before this reader checked, or a writer's row remains: the reader withdraws
			jdbc.update(this.sql.deleteHolder(), key, owner);
			markWanted(jdbc, key, owner);
			return Optional.empty();
		}
		Checked row = checked.get(0);
		return Optional.of(new Lease(key, owner, row.token(), row.expiresAt()));
	}

	/**
	 * The reader's token, if no writer's intent is live and the key has no writer row: with
	 * {@link ReadWriteStatements#drawReaderToken()} (no row if blocked), else
	 * {@link ReadWriteStatements#checkReader()}.
	 */
	private List<Checked> checkReader(JdbcOperations jdbc, String key, String owner) {
		String drawReaderToken = this.sql.drawReaderToken();
		if (drawReaderToken != null) {
			return jdbc.query(drawReaderToken, (rs, i) -> new Checked(rs.getLong("token"),
					this.sql.readInstant(rs, "expires_at"), Checked.FREE), key, owner, key, key);
		}
		return jdbc.query(this.sql.checkReader(), this.checked, key, key, key, key, owner);
	}

	@Override
	public WriteAttempt tryWrite(String key, String owner, Duration lease, boolean again) {
		AtomicReference<@Nullable List<String>> endedHolders = new AtomicReference<>();
		try {
			WriteAttempt attempt = this.connections.onOwnConnection((jdbc) -> {
				WriteAttempt claimed = claimAndInsert(jdbc, key, owner, lease, again);
				if (!claimed.intent()) {
					markWanted(jdbc, key, owner);
					return claimed;
				}
				Lease inserted = claimed.lease();
				if (inserted == null) {
					List<String> ended = jdbc.queryForList(this.sql.endedHolders(), String.class, key);
					if (!ended.isEmpty()) {
						endedHolders.set(ended);
					}
				}
				return new WriteAttempt(true, inserted);
			});
			List<String> ended = endedHolders.get();
			if (ended == null) {
				return attempt;
			}
			boolean[] deleted = { false };
			try {
				// on a connection of its own, so that a delete that timed out is cancelled on the server
				return new WriteAttempt(true, this.connections.onOwnConnection((jdbc) -> {
					deleted[0] = deleteEnded(jdbc, key, ended);
					return Optional.ofNullable(insertWriter(jdbc, key, owner, lease));
				}).orElse(null));
			}
			catch (DataAccessException ex) {
				if (deleted[0] || !this.connections.waitedTooLong(ex)) {
					throw ex;
				}
				// the delete waited past the statement timeout for a renewal whose commit stalls: not yet
				logger.debug("Ended holders of '" + key + "' not deleted: " + ex.getMessage());
				return attempt;
			}
		}
		catch (DataAccessException ex) {
			if (!this.connections.isContention(ex)) {
				throw ex;
			}
			logger.debug("Attempt to write '" + key + "' did not acquire: " + ex.getMessage());
			// whether the intent is this writer's is not known: the next attempt claims it again
			return new WriteAttempt(true, null);
		}
	}

	/**
	 * Claims the key's intent, then inserts the writer's row if the intent is this writer's:
	 * in one round trip where the dialect sends them together with the key's token-order lock,
	 * or in sequence ({@link ReadWriteStatements#claimAndInsertWriterTogether()}), else in
	 * round trips of their own, the claim committed first.
	 */
	private WriteAttempt claimAndInsert(JdbcOperations jdbc, String key, String owner, Duration lease, boolean again) {
		String together = this.sql.claimAndInsertWriterTogether();
		if (together == null) {
			if (!claim(jdbc, key, owner, lease, again)) {
				return new WriteAttempt(false, null);
			}
			return new WriteAttempt(true, insertWriter(jdbc, key, owner, lease));
		}
		boolean[] intent = { false };
		List<Lease> inserted = new ArrayList<>(1);
		RowCallbackHandler claimed = (rs) -> intent[0] = owner.equals(rs.getString(1));
		RowCallbackHandler row = (rs) -> inserted
			.add(new Lease(key, owner, rs.getLong("token"), this.sql.readInstant(rs, "expires_at")));
		RowCallbackHandler[] results = (this.sql.lockKeyParameters(key) != null) ? new RowCallbackHandler[] { (rs) -> {
		}, claimed, row } : new RowCallbackHandler[] { claimed, row };
		OneTransaction.sendTogether(jdbc, together, this.sql.claimAndInsertWriterTogetherParameters(key, owner,
				SqlDialect.micros(lease), SqlDialect.micros(lease.dividedBy(2))), results);
		// a writer's row is inserted only under its own intent
		return new WriteAttempt(intent[0] || !inserted.isEmpty(), inserted.isEmpty() ? null : inserted.get(0));
	}

	/**
	 * Deletes the key's rows of these owners whose leases have ended, by their primary key, in
	 * a statement that waits for a renewal of such a row that the database is still writing
	 * (and leaves the row if the renewal committed): a row that remains counts as a holder.
	 * @return whether there were such rows to delete (deleted now or by another caller)
	 */
	private boolean deleteEnded(JdbcOperations jdbc, String key, List<String> owners) {
		if (owners.isEmpty()) {
			return false;
		}
		Object[] parameters = new Object[1 + owners.size()];
		parameters[0] = key;
		for (int i = 0; i < owners.size(); i++) {
			parameters[1 + i] = owners.get(i);
		}
		jdbc.update(this.sql.deleteEndedHolders(owners.size()), parameters);
		return true;
	}

	/** The writer's row, if the key had no holder row, live or ended, and its intent is this writer's. */
	private @Nullable Lease insertWriter(JdbcOperations jdbc, String key, String owner, Duration lease) {
		RowMapper<Lease> taken = (rs, i) -> new Lease(key, owner, rs.getLong("token"),
				this.sql.readInstant(rs, "expires_at"));
		Object[] parameters = this.sql.insertWriterParameters(key, owner, SqlDialect.micros(lease),
				SqlDialect.micros(lease.dividedBy(2)));
		String insertWriterReturning = this.sql.insertWriterReturning();
		if (insertWriterReturning != null && this.sql.drawToken() != null) {
			// the row with a placeholder token, then its token, in one transaction
			return OneTransaction.run(jdbc, (con) -> jdbc.query(insertWriterReturning, taken, parameters)
				.stream()
				.findFirst()
				.map((inserted) -> new Lease(key, owner, drawToken(jdbc, key, owner), inserted.expiresAt())))
				.orElse(null);
		}
		Object[] lockKey = this.sql.lockKeyParameters(key);
		String together = this.sql.insertWriterTogether();
		if (together != null && lockKey != null) {
			// the key's token-order lock first, then the insert, whose snapshot is taken after it (READ COMMITTED,
			// whatever the session's isolation); else a reader's row committed while the insert waited for the lock
			// would be missed by it, though that reader drew a smaller token (and holds once its check runs after
			// this writer's release)
			Object[] all = new Object[lockKey.length + parameters.length];
			System.arraycopy(lockKey, 0, all, 0, lockKey.length);
			System.arraycopy(parameters, 0, all, lockKey.length, parameters.length);
			List<Lease> inserted = new ArrayList<>(1);
			OneTransaction.sendTogether(jdbc, together, all, (rs) -> {
			}, (rs) -> inserted.add(taken.mapRow(rs, 0)));
			return inserted.isEmpty() ? null : inserted.get(0);
		}
		if (insertWriterReturning != null) {
			return jdbc.query(insertWriterReturning, taken, parameters).stream().findFirst().orElse(null);
		}
		if (jdbc.update(this.sql.insertWriter(), parameters) == 0) {
			return null;
		}
		return jdbc.query(this.sql.selectHolder(), taken, key, owner).stream().findFirst().orElse(null);
	}

	/**
	 * Marks another owner's live intent on the key as wanted, for its writer's turn; a mark
	 * is a hint, so one that fails is no failure of the attempt.
	 * @return whether there was such an intent (or the mark failed)
	 */
	private boolean markWanted(JdbcOperations jdbc, String key, String owner) {
		try {
			return jdbc.update(this.sql.markWanted(), key, owner) > 0;
		}
		catch (DataAccessException ex) {
			logger.debug("Could not mark '" + key + "' as wanted: " + ex.getMessage());
			return true;
		}
	}

	/** Draws the token of the row a writer's insert wrote with a placeholder. */
	private long drawToken(JdbcOperations jdbc, String key, String owner) {
		Long token = jdbc.query(Objects.requireNonNull(this.sql.drawToken()), (rs, i) -> rs.getLong("token"), key, owner)
			.stream()
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("The row of '" + key + "' that " + owner + " inserted is gone"));
		return token;
	}

	/**
	 * Makes the key's intent this writer's: inserts it if there is none, renews it if it is
	 * this writer's, takes it if it expired. A first attempt inserts first (a free key needs
	 * nothing more), a later one updates first (its intent is there).
	 */
	private boolean claim(JdbcOperations jdbc, String key, String owner, Duration lease, boolean again) {
		long micros = SqlDialect.micros(lease);
		if (again) {
			return jdbc.update(this.sql.claimIntent(), owner, micros, key, owner) == 1 || insertIntent(jdbc, key, owner, micros);
		}
		return insertIntent(jdbc, key, owner, micros) || jdbc.update(this.sql.claimIntent(), owner, micros, key, owner) == 1;
	}

	private boolean insertIntent(JdbcOperations jdbc, String key, String owner, long micros) {
		try {
			return jdbc.update(this.sql.insertIntent(), key, owner, micros) == 1;
		}
		catch (DuplicateKeyException ex) {
			// the key has an intent (where the insert cannot ignore a duplicate)
			return false;
		}
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

	private void deleteQuietly(String key, String owner) {
		try {
			this.connections.onOwnConnection((jdbc) -> jdbc.update(this.sql.deleteHolder(), key, owner));
		}
		catch (DataAccessException ex) {
			logger.debug("Could not delete the row of a read attempt on '" + key + "'; it ends with its lease", ex);
		}
	}

	/** A reader's row as checked: {@code blocked} is {@link #FREE}, 1 (a live writer) or {@link #ENDED_WRITER}. */
	private record Checked(long token, Instant expiresAt, int blocked) {

		static final int FREE = 0;

		static final int ENDED_WRITER = 2;

	}

	@Override
	public String toString() {
		return "JdbcReadWriteLockRepository[" + this.connections.dialect() + "]";
	}

}
