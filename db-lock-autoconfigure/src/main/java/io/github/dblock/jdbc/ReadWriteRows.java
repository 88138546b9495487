package io.github.dblock.jdbc;

import java.util.List;

import io.github.dblock.jdbc.dialect.ReadWriteStatements;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcOperations;

/**
 * What a {@link JdbcReadAttempts read} and a {@link JdbcWriteAttempts write} attempt do alike
 * to a key's rows: mark another writer's intent as wanted, delete ended holder rows.
 *
 * @since 0.1.0
 */
final class ReadWriteRows {

	private static final Log logger = LogFactory.getLog(ReadWriteRows.class);

	private ReadWriteRows() {
	}

	/**
	 * Marks another owner's live intent on the key as wanted, for its writer's turn; a mark
	 * is a hint, so one that fails is no failure of the attempt.
	 * @return whether there was such an intent (or the mark failed)
	 */
	static boolean markWanted(JdbcOperations jdbc, ReadWriteStatements sql, String key, String owner) {
		try {
			return jdbc.update(sql.markWanted(), key, owner) > 0;
		}
		catch (DataAccessException ex) {
			logger.debug("Could not mark '" + key + "' as wanted: " + ex.getMessage());
			return true;
		}
	}

	/**
	 * Deletes the key's rows of these owners whose leases have ended, by their primary key, in
	 * a statement that waits for a renewal of such a row that the database is still writing
	 * (and leaves the row if the renewal committed): a row that remains counts as a holder.
	 * @return whether there were such rows to delete (deleted now or by another caller)
	 */
	static boolean deleteEnded(JdbcOperations jdbc, ReadWriteStatements sql, String key, List<String> owners) {
		if (owners.isEmpty()) {
			return false;
		}
		Object[] parameters = new Object[1 + owners.size()];
		parameters[0] = key;
		for (int i = 0; i < owners.size(); i++) {
			parameters[1 + i] = owners.get(i);
		}
		jdbc.update(sql.deleteEndedHolders(owners.size()), parameters);
		return true;
	}

}
