package io.github.dblock.jdbc;

import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

import io.github.dblock.jdbc.dialect.FairQueueStatements;
import io.github.dblock.jdbc.dialect.OneTransaction;
import io.github.dblock.jdbc.dialect.SqlDialect;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.support.GeneratedKeyHolder;
import org.springframework.jdbc.support.KeyHolder;

/**
 * {@link FairLockRepository} over JDBC, the dialect's {@linkplain FairQueueStatements fair
 * queue statements} on a {@link LockConnections}: every statement runs on a connection of
 * its own in autocommit, outside the caller's transaction, within the statement timeout. A
 * deadlock or lock-wait timeout is tried again (each statement checks what it needs, so
 * running it again is safe), at most three times.
 *
 * @since 0.1.0
 */
public class JdbcFairLockRepository implements FairLockRepository {

	private static final int ATTEMPTS = 3;

	/** The most ended tickets ahead one look at the head deletes; the rest at the next. */
	private static final int MAX_DELETES = 3;

	private static final Log logger = LogFactory.getLog(JdbcFairLockRepository.class);

	/** A ticket's number and whether its lease is valid (1 or 0), as the head and following reads give them. */
	private static final RowMapper<long[]> TICKET_AND_LIVE = (rs, i) -> new long[] { rs.getLong(1), rs.getInt(2) };

	private final LockConnections connections;

	private final FairQueueStatements sql;

	/**
	 * Creates the repository.
	 * @param connections the lock connections, with the dialect and the statement timeout
	 * @throws IllegalArgumentException if the fair mode has no statements for the dialect
	 */
	public JdbcFairLockRepository(LockConnections connections) {
		this.connections = connections;
		this.sql = connections.dialect().fairQueueStatements();
	}

	/** Enqueues a ticket; creates the key's row first if it has none. */
	@Override
	public Ticket enqueue(String key, String owner, Duration lease) {
		long number = retrying(() -> this.connections.onOwnConnection((jdbc) -> {
			Long ticket = insertTicket(jdbc, key, owner, lease);
			if (ticket == null) {
				try {
					jdbc.update(this.sql.insertKeySql(), key);
				}
				catch (DuplicateKeyException ex) {
					// inserted meanwhile by another caller
				}
				ticket = insertTicket(jdbc, key, owner, lease);
			}
			return Objects.requireNonNull(ticket, () -> "no ticket enqueued for '" + key + "'");
		}));
		return new Ticket(key, owner, number);
	}

	/**
	 * Where the dialect sends them together ({@link FairQueueStatements#enqueueAndLookSql()}),
	 * the enqueue and the look at the key's lowest ticket in one round trip
	 * ({@link OneTransaction#sendTogether}): on PostgreSQL in one transaction at
	 * {@code READ COMMITTED}, on MariaDB in sequence, the enqueue committed before the look
	 * starts. The look's
	 * snapshot is taken after the enqueue locked the key's row (every earlier ticket of the
	 * key has committed by then) and sees the ticket itself. A key with no row yet takes the
	 * statements of {@link #enqueue}; then, and with an ended ticket ahead, the caller asks
	 * for the head ({@link Enqueued#NOT_LOOKED}), which deletes such a ticket first.
	 */
	@Override
	public Enqueued enqueueAndLook(String key, String owner, Duration lease) {
		String sql = this.sql.enqueueAndLookSql();
		if (sql == null) {
			return FairLockRepository.super.enqueueAndLook(key, owner, lease);
		}
		Object[] parameters = { owner, SqlDialect.micros(lease), key, key };
		long[] looked = retrying(() -> this.connections.onOwnConnection((jdbc) -> {
			long[] rows = new long[3];
			OneTransaction.sendTogether(jdbc, sql, parameters, (rs) -> rows[0] = rs.getLong(1), (rs) -> {
				rows[1] = rs.getLong(1);
				rows[2] = rs.getInt(2);
			});
			return rows;
		}));
		if (looked[0] == 0) {
			// the key has no row yet: created, then the ticket, whose caller then asks for the head
			return new Enqueued(enqueue(key, owner, lease), Enqueued.NOT_LOOKED);
		}
		Ticket ticket = new Ticket(key, owner, looked[0]);
		if (looked[1] == ticket.number()) {
			return new Enqueued(ticket, (looked[2] == 1) ? ticket.number() : 0L);
		}
		// an earlier ticket: the head if live; else the caller asks for the head, which deletes it first
		return new Enqueued(ticket, (looked[2] == 1) ? looked[1] : Enqueued.NOT_LOOKED);
	}

	private @Nullable Long insertTicket(JdbcOperations jdbc, String key, String owner, Duration lease) {
		long micros = SqlDialect.micros(lease);
		if (!this.sql.ticketIsGeneratedKey()) {
			List<Long> tickets = jdbc.queryForList(this.sql.enqueueSql(), Long.class, owner, micros, key);
			return tickets.isEmpty() ? null : tickets.get(0);
		}
		KeyHolder keys = new GeneratedKeyHolder();
		int inserted = jdbc.update((con) -> {
			PreparedStatement ps = con.prepareStatement(this.sql.enqueueSql(), Statement.RETURN_GENERATED_KEYS);
			ps.setString(1, owner);
			ps.setLong(2, micros);
			ps.setString(3, key);
			return ps;
		}, keys);
		return (inserted == 0) ? null : Objects.requireNonNull(keys.getKey(), "no generated ticket").longValue();
	}

	/**
	 * The lowest ticket up to this one, ended or not. An ended ticket ahead is not passed
	 * over but deleted first: its renewal may have been checked before its lease ended and
	 * still be committing, and a plain read does not wait for it (it would pass the ticket,
	 * which then holds again once the renewal commits). The {@code DELETE}, by the ticket's
	 * primary key, waits for such a renewal and leaves the ticket if it committed; a ticket
	 * that remains is ahead, ended or not. One that cannot be deleted within the statement
	 * timeout (a renewal whose commit stalls) is ahead too: the caller asks again later. No
	 * ticket below this one can appear later: a key's tickets commit in the order of their
	 * numbers.
	 */
	@Override
	public long head(Ticket ticket) {
		long[] first = retrying(() -> this.connections.onOwnConnection((jdbc) -> lowest(jdbc, ticket)));
		for (int deletes = 0; first[0] != 0 && first[0] != ticket.number() && first[1] == 0; deletes++) {
			long ended = first[0];
			if (deletes == MAX_DELETES) {
				return ended;
			}
			try {
				first = retrying(() -> this.connections.onOwnConnection((jdbc) -> {
					jdbc.update(this.sql.deleteEndedAheadSql(), ended, ticket.key());
					return lowest(jdbc, ticket);
				}));
			}
			catch (DataAccessException ex) {
				if (!this.connections.waitedTooLong(ex)) {
					throw ex;
				}
				logger.debug("Ended ticket " + ended + " of '" + ticket.key() + "' not deleted: " + ex.getMessage());
				return ended;
			}
		}
		if (first[0] == ticket.number()) {
			// this ticket's own lease ended: it is gone, whether or not its row is
			return (first[1] == 1) ? ticket.number() : 0L;
		}
		return first[0];
	}

	/** The lowest ticket up to this one and whether it is live (1 or 0); {0, 0} if none. */
	private long[] lowest(JdbcOperations jdbc, Ticket ticket) {
		List<long[]> rows = jdbc.query(this.sql.headSql(), TICKET_AND_LIVE, ticket.key(), ticket.number());
		return rows.isEmpty() ? new long[] { 0, 0 } : rows.get(0);
	}

	@Override
	public long following(Ticket ticket) {
		List<long[]> rows = retrying(() -> this.connections.onOwnConnection(
				(jdbc) -> jdbc.query(this.sql.followingSql(), TICKET_AND_LIVE, ticket.key(), ticket.number())));
		boolean live = !rows.isEmpty() && rows.get(0)[0] == ticket.number() && rows.get(0)[1] == 1;
		return (live && rows.size() == 2 && rows.get(1)[1] == 1) ? rows.get(1)[0] : 0L;
	}

	/** One statement for all when every ticket is renewed; each alone after it otherwise. */
	@Override
	public List<Boolean> renewAll(List<Ticket> tickets, Duration lease) {
		long micros = SqlDialect.micros(lease);
		// not retried: the renewal goes on at its next tick
		return this.connections.onOwnConnection((jdbc) -> {
			if (tickets.size() > 1) {
				Object[] parameters = new Object[1 + 2 * tickets.size()];
				parameters[0] = micros;
				for (int i = 0; i < tickets.size(); i++) {
					parameters[1 + i] = tickets.get(i).number();
					parameters[1 + tickets.size() + i] = tickets.get(i).owner();
				}
				if (jdbc.update(this.sql.renewAllSql(tickets.size()), parameters) == tickets.size()) {
					return Collections.nCopies(tickets.size(), Boolean.TRUE);
				}
			}
			List<Boolean> renewed = new ArrayList<>(tickets.size());
			for (Ticket ticket : tickets) {
				renewed.add(jdbc.update(this.sql.renewSql(), micros, ticket.number(), ticket.owner()) == 1);
			}
			return renewed;
		});
	}

	@Override
	public boolean leave(Ticket ticket) {
		return retrying(() -> this.connections.onOwnConnection(
				(jdbc) -> jdbc.update(this.sql.leaveSql(), ticket.number(), ticket.owner(), ticket.key()) == 1));
	}

	@Override
	public boolean abandon(String key, String owner) {
		return retrying(
				() -> this.connections.onOwnConnection((jdbc) -> jdbc.update(this.sql.abandonSql(), key, owner) > 0));
	}

	@Override
	public int abandonAll(Map<String, String> keysByOwner) {
		return retrying(() -> this.connections.onOwnConnection(
				(jdbc) -> JdbcLockRepository.abandonAll(jdbc, this.sql.queueTable(), keysByOwner)));
	}

	@Override
	public int deleteExpired(int limit) {
		return retrying(() -> this.connections
			.onOwnConnection((jdbc) -> jdbc.update(this.sql.deleteExpiredSql(), limit)));
	}

	@Override
	public List<HeldTicket> holders(int limit) {
		SqlDialect dialect = this.connections.dialect();
		return this.connections.onOwnConnection((jdbc) -> jdbc.query(this.sql.holdersSql(),
				(rs, i) -> new HeldTicket(new Ticket(rs.getString("lock_key"), rs.getString("owner"), rs.getLong("ticket")),
						dialect.readInstant(rs, "expires_at")),
				limit));
	}

	@Override
	public @Nullable String unavailable() {
		return this.connections.onOwnConnection((jdbc) -> {
			try {
				jdbc.queryForList(this.sql.checkTablesSql(), Long.class);
			}
			catch (DataAccessException ex) {
				return Optional.of("its queue table " + this.sql.queueTable() + " cannot be read (" + ex.getMessage()
						+ "); db-lock's migration V5 creates it");
			}
			return Optional.ofNullable(this.connections.dialect().inspection().multiPrimaryCluster(jdbc))
				.map((cluster) -> cluster + ", whose nodes each number and lock their own inserts until they "
						+ "commit: tickets would not be in arrival order");
		}).orElse(null);
	}

	private <T> T retrying(Supplier<T> statement) {
		for (int attempt = 1;; attempt++) {
			try {
				return statement.get();
			}
			catch (DataAccessException ex) {
				if (!this.connections.dialect().errors().isContention(ex) || attempt == ATTEMPTS) {
					throw ex;
				}
			}
		}
	}

}
