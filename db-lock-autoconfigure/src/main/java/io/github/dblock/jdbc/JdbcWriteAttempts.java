package io.github.dblock.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

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
 * The attempts of a {@link JdbcReadWriteLockRepository} to take a key to write: its
 * statements, their round trips and the handling of their failures, as the repository
 * describes them.
 *
 * @since 0.1.0
 * @see JdbcReadAttempts
 */
final class JdbcWriteAttempts {

	private static final Log logger = LogFactory.getLog(JdbcWriteAttempts.class);

	private final LockConnections connections;

	private final ReadWriteStatements sql;

	JdbcWriteAttempts(LockConnections connections, ReadWriteStatements sql) {
		this.connections = connections;
		this.sql = sql;
	}

	/** See {@link ReadWriteLockRepository#tryWrite}. */
	WriteAttempt tryWrite(String key, String owner, Duration lease, boolean again) {
		AtomicReference<@Nullable List<String>> endedHolders = new AtomicReference<>();
		try {
			WriteAttempt attempt = this.connections.onOwnConnection((jdbc) -> {
				WriteAttempt claimed = claimAndInsert(jdbc, key, owner, lease, again);
				if (!claimed.intent()) {
					ReadWriteRows.markWanted(jdbc, this.sql, key, owner);
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
					deleted[0] = ReadWriteRows.deleteEnded(jdbc, this.sql, key, ended);
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
		RowCallbackHandler[] results = this.sql.sentTogetherAfterLock() ? new RowCallbackHandler[] { (rs) -> {
		}, claimed, row } : new RowCallbackHandler[] { claimed, row };
		OneTransaction.sendTogether(jdbc, together, this.sql.claimAndInsertWriterTogetherParameters(key, owner,
				SqlDialect.micros(lease), SqlDialect.micros(lease.dividedBy(2))), results);
		// a writer's row is inserted only under its own intent
		return new WriteAttempt(intent[0] || !inserted.isEmpty(), inserted.isEmpty() ? null : inserted.get(0));
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

}
