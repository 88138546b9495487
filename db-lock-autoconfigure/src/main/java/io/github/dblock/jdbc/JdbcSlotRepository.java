package io.github.dblock.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.UnaryOperator;

import io.github.dblock.jdbc.dialect.SlotStatements;
import io.github.dblock.jdbc.dialect.SqlDialect;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcOperations;

/**
 * {@link SlotRepository} over JDBC: the dialect's {@linkplain SlotStatements slot
 * statements} on {@code <table>_slot}, each claim on a connection of its own of a
 * {@link LockConnections}, outside the caller's transaction, in autocommit and within the
 * statement timeout: the database's now is read, turned into a slot, and the slot's row
 * inserted unless its key is taken: a slot claimed by another node.
 *
 * @since 0.1.0
 */
public class JdbcSlotRepository implements SlotRepository {

	private static final Log logger = LogFactory.getLog(JdbcSlotRepository.class);

	private final LockConnections connections;

	private final SqlDialect dialect;

	private final SlotStatements sql;

	/**
	 * Creates a repository on the given connections.
	 * @param connections the owner of the lock connections, with the dialect and the
	 * statement timeout
	 */
	public JdbcSlotRepository(LockConnections connections) {
		this.connections = connections;
		this.dialect = connections.dialect();
		this.sql = new SlotStatements(this.dialect);
	}

	@Override
	public SlotClaim claim(String task, String owner, UnaryOperator<Instant> slotAt, Duration retention) {
		return this.connections.onOwnConnection((jdbc) -> {
			Instant now = Objects.requireNonNull(jdbc.queryForObject(this.sql.databaseTimeSql(),
					(rs, i) -> this.dialect.readInstant(rs, "database_now")));
			Instant slot = slotAt.apply(now);
			try {
				if (jdbc.update(this.sql.claimSql(), task, this.dialect.instantParameter(slot), owner) == 0) {
					return new SlotClaim(now, slot, false);
				}
			}
			catch (DuplicateKeyException ex) {
				return new SlotClaim(now, slot, false);
			}
			deleteBefore(jdbc, task, slot.minus(retention));
			return new SlotClaim(now, slot, true);
		});
	}

	/** Deletes a task's slots before a time; a failure is logged: the next claim tries again. */
	private void deleteBefore(JdbcOperations jdbc, String task, Instant before) {
		try {
			int deleted = jdbc.update(this.sql.deleteBeforeSql(), task, this.dialect.instantParameter(before));
			if (deleted > 0 && logger.isDebugEnabled()) {
				logger.debug("Deleted " + deleted + " slots of task '" + task + "' before " + before);
			}
		}
		catch (DataAccessException ex) {
			logger.debug("Could not delete the slots of task '" + task + "' before " + before
					+ "; the next claim tries again", ex);
		}
	}

	@Override
	public List<ClaimedSlot> claims(String task, int limit) {
		return this.connections.onOwnConnection((jdbc) -> jdbc.query(this.sql.claimsSql(),
				(rs, i) -> new ClaimedSlot(this.dialect.readInstant(rs, "slot_at"), rs.getString("owner"),
						this.dialect.readInstant(rs, "claimed_at")),
				task, limit));
	}

	@Override
	public @Nullable String unavailable() {
		return this.connections.onOwnConnection((jdbc) -> {
			try {
				jdbc.queryForList(this.sql.checkSql(), Object.class);
				return Optional.<String>empty();
			}
			catch (DataAccessException ex) {
				return Optional.of("its table " + this.sql.table() + " cannot be read (" + ex.getMessage()
						+ "); db-lock's migration V10 creates it");
			}
		}).orElse(null);
	}

	@Override
	public int maxTaskLength() {
		return JdbcLockRepository.MAX_KEY_LENGTH;
	}

}
