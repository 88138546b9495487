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

import io.github.dblock.jdbc.dialect.OneTransaction;
import io.github.dblock.jdbc.dialect.ReadWriteStatements;
import io.github.dblock.jdbc.dialect.SqlDialect;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.jdbc.core.RowMapper;

/**
 * The attempts of a {@link JdbcReadWriteLockRepository} to take a key to read: its
 * statements, their round trips and the handling of their failures, as the repository
 * describes them.
 *
 * @since 0.1.0
 * @see JdbcWriteAttempts
 */
final class JdbcReadAttempts {

	private static final Log logger = LogFactory.getLog(JdbcReadAttempts.class);

	private final LockConnections connections;

	private final ReadWriteStatements sql;

	/** A row of {@link ReadWriteStatements#checkReader()}. */
	private final RowMapper<Checked> checked;

	JdbcReadAttempts(LockConnections connections, ReadWriteStatements sql) {
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
				ReadWriteRows.markWanted(jdbc, this.sql, key, owner);
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
			ReadWriteRows.deleteEnded(jdbc, this.sql, key, ended);
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
			if (inserted.isEmpty() && !ReadWriteRows.markWanted(jdbc, this.sql, key, owner)) {
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
			ReadWriteRows.deleteEnded(jdbc, this.sql, key, ended);
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
				(rs) -> {
					inserted[0] = rs.getLong("inserted");
					rs.getLong("token");
					if (!rs.wasNull()) {
						checked.add(this.checked.mapRow(rs, 0));
					}
				});
		return (inserted[0] == 0) ? null : checked;
	}

	/** The reader's lease if its check found no writer, else withdraws its row. */
	private Optional<Lease> readOrWithdraw(JdbcOperations jdbc, String key, String owner, List<Checked> checked) {
		if (checked.isEmpty() || checked.get(0).blocked() != Checked.FREE) {
			// a writer announced itself before this reader checked, or a writer's row remains: the reader withdraws
			jdbc.update(this.sql.deleteHolder(), key, owner);
			ReadWriteRows.markWanted(jdbc, this.sql, key, owner);
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
		return jdbc.query(this.sql.checkReader(), this.checked, this.sql.checkReaderParameters(key, owner));
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
