package io.github.dblock.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import io.github.dblock.jdbc.ReadWriteLockRepository.WriteAttempt;
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
 * The attempts of a {@link JdbcReadWriteLockRepository} to take a key, to read or to write:
 * its statements, their round trips and the handling of their failures, as the repository
 * describes them.
 *
 * @since 0.1.0
 */
final class JdbcReadWriteAttempts {

	private static final Log logger = LogFactory.getLog(JdbcReadWriteAttempts.class);

	private final LockConnections connections;

	private final ReadWriteStatements sql;

	/** A row of {@link ReadWriteStatements#checkReader()}. */
	private final RowMapper<Checked> checked;

	JdbcReadWriteAttempts(LockConnections connections, ReadWriteStatements sql) {
		this.connections = connections;
		this.sql = sql;
		this.checked = (rs, i) -> new Checked(rs.getLong("token"), this.sql.readInstant(rs, "expires_at"),
				rs.getInt("blocked"));
	}

	/** See {@link ReadWriteLockRepository#tryRead}. */
	Optional<Lease> tryRead(String key, String owner, Duration lease) {
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
	 * @return the check, or {@code null} if the insert was refused
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
		long[] inserted = { 0 };
		List<Checked> checked = new ArrayList<>(1);
		OneTransaction.sendTogether(jdbc, inSequence, this.sql.insertAndCheckReaderParameters(key, owner, micros),
				(rs) -> inserted[0] = rs.getLong(1), (rs) -> checked.add(this.checked.mapRow(rs, 0)));
		return (inserted[0] == 0) ? null : checked;
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

	/** See {@link ReadWriteLockRepository#tryWrite}. */
	WriteAttempt tryWrite(String key, String owner, Duration lease, boolean again) {
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

}
