#!/usr/bin/env bats
# Runner self-test: this suite must be reported as failed.

@test "a test that fails" {
	false
}
