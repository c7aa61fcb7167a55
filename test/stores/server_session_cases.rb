# frozen_string_literal: true

require_relative "store_helper"

module LeaseMachines
  # What a store on a database server shows of its server session across a
  # fork, against the real server. An including test class provides
  # `new_store` and `server_session(store)`: the server's id of the session
  # that the store's own connection is on (PostgreSQL's backend pid, MySQL's
  # connection id).
  module ServerSessionCases
    include StoreTestHelper

    # A child that uses a URL store and exits (exit, or exit!) never touches
    # the parent's session: the parent goes on in the same server session.
    def test_a_forked_child_that_uses_the_store_and_exits_leaves_the_parents_session
      store = new_store
      authority = store.authority(unique_name("fork"))
      authority.acquire(owner: 1, now: 1, ttl: 1)
      session = server_session(store)
      token = 1
      %i[exit exit!].each do |how|
        pid = fork do
          code = authority.reacquire(owner: 1, now: 2, ttl: 1).granted? ? 0 : 1
          how == :exit ? exit(code) : exit!(code)
        end
        _, status = Process.waitpid2(pid)
        assert_predicate status, :success?, "the child (#{how}) decided"
        token += 2 # the child's grant, then this one
        assert_equal token, authority.reacquire(owner: 1, now: 3, ttl: 1).lease.token, "the parent's next call works"
        assert_equal session, server_session(store), "in the same server session (after #{how})"
      end
    end

    # Nor does a child that never used the store: Ruby finalizes the copy of
    # the connection it inherited when it exits.
    def test_a_forked_child_that_never_uses_the_store_leaves_the_parents_session
      store = new_store
      authority = store.authority(unique_name("fork-unused"))
      authority.acquire(owner: 1, now: 1, ttl: 1)
      session = server_session(store)
      pid = fork { exit(0) }
      _, status = Process.waitpid2(pid)
      assert_predicate status, :success?
      assert_equal 2, authority.reacquire(owner: 1, now: 2, ttl: 1).lease.token, "the parent's next call works"
      assert_equal session, server_session(store), "in the same server session"
    end
  end
end
