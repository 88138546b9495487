/**
 * A small order-payment service that uses db-lock: a double-clicked "pay" charges once.
 */
@NullMarked
package io.github.dblock.sample;

import org.jspecify.annotations.NullMarked;
