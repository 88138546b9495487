package io.github.dblock.nodes;

import io.github.dblock.testsupport.OwnMariaDb;
import io.github.dblock.testsupport.OwnServer;

class MariaDbDatabaseRestartTests extends DatabaseRestartContractTests {

	@Override
	protected OwnServer start() throws Exception {
		return OwnMariaDb.start();
	}

}
