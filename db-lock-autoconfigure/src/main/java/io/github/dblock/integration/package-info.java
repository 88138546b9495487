/**
 * Spring Integration on db-lock: {@link io.github.dblock.integration.DbLockRegistry}, a
 * {@code LockRegistry} whose locks are db-lock's, for Spring Integration's aggregators, its
 * {@code LockRequestHandlerAdvice} and its {@code LockRegistryLeaderInitiator}.
 */
@NullMarked
package io.github.dblock.integration;

import org.jspecify.annotations.NullMarked;
