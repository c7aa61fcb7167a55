# frozen_string_literal: true

module LeaseMachines
  # Issue #26 item 3: a failover that lost an acknowledged grant lets the
  # store issue the same token again, to another holder. The fence records
  # the owner with its mark and refuses an equal token from another owner.
  # Included by GuardContract: every engine, every kind of connection.
  module ReissuedTokenCases
    # The fence table as the gem shipped it before the owner column, per engine.
    OLD_SCHEMAS = {
      sqlite: <<~SQL,
        CREATE TABLE lease_machines_fences (
          resource TEXT NOT NULL PRIMARY KEY,
          highest  TEXT CHECK (highest IS NULL OR (length(highest) = 20 AND highest NOT GLOB '*[^0-9]*'
                                                   AND highest <= '18446744073709551615'))
        ) WITHOUT ROWID;
      SQL
      postgres: <<~SQL,
        CREATE TABLE lease_machines_fences (
          resource   text          NOT NULL,
          highest    numeric(20,0),
          CONSTRAINT lease_machines_fences_pkey PRIMARY KEY (resource),
          CONSTRAINT lease_machines_fences_highest_is_a_token
            CHECK (highest BETWEEN 0 AND 18446744073709551615)
        );
      SQL
      mysql: <<~SQL
        CREATE TABLE lease_machines_fences (
          resource VARBINARY(255)  NOT NULL,
          highest  DECIMAL(20,0),
          admitted BIGINT UNSIGNED NOT NULL DEFAULT 0,
          PRIMARY KEY (resource),
          CONSTRAINT lease_machines_fences_highest_is_a_token CHECK (highest BETWEEN 0 AND 18446744073709551615)
        ) ENGINE = InnoDB
      SQL
    }.freeze
    MAX = (2**64) - 1

    def test_a_reissued_token_from_another_owner_is_refused_and_nothing_of_the_block_runs
      resource = unique_name("reissued")
      fences.guard(resource, 5, owner: 7) { |conn| write(conn, resource, "by owner 7, token 5") }
      ran = false

      error = assert_raises(ReissuedTokenError) do
        fences.guard(resource, 5, owner: 12) do |conn|
          ran = true
          write(conn, resource, "by owner 12, token 5 again")
        end
      end

      refute ran, "the block of a refused guard must not run"
      assert_kind_of FencedError, error
      assert_equal [resource, 5, 5, 12, 7], [error.resource, error.token, error.highest, error.owner,
                                             error.recorded_owner]
      assert_equal "#{resource.inspect} refused token 5: it was reissued: owner 7 has already written with it, " \
                   "and this is owner 12", error.message
      assert_equal "by owner 7, token 5", committed_body(resource)
      assert_equal [stored_text(5), "7"], [committed_mark_text(resource), committed_owner(resource)]
    end

    def test_a_lease_shows_its_owner
      resource = unique_name("reissued")
      first = Lease.exact(owner: MAX, token: 3, expires_at_ns: 1)
      second = Lease.exact(owner: 4, token: 3, expires_at_ns: 2)
      fences.guard(resource, first) { |conn| write(conn, resource, "by the first grant of 3") }
      assert_equal MAX.to_s, committed_owner(resource), "owners are unsigned 64-bit"

      error = assert_raises(ReissuedTokenError) { fences.guard(resource, second) { flunk "ran" } }
      assert_equal [4, MAX], [error.owner, error.recorded_owner]
      assert_raises(ArgumentError) { fences.guard(resource, first, owner: MAX) { flunk "ran" } }
      assert_equal "by the first grant of 3", committed_body(resource)
    end

    def test_the_same_owner_with_an_equal_token_passes
      resource = unique_name("reissued")
      fences.guard(resource, 5, owner: 7) { |conn| write(conn, resource, "first by 7") }
      fences.guard(resource, 5, owner: 7) { |conn| write(conn, resource, "second by 7") }

      assert_equal "second by 7", committed_body(resource)
      assert_equal [stored_text(5), "7"], [committed_mark_text(resource), committed_owner(resource)]
    end

    def test_a_bare_token_passes_as_before_and_changes_no_owner
      resource = unique_name("reissued")
      fences.guard(resource, 5, owner: 7) { |conn| write(conn, resource, "by 7") }
      fences.guard(resource, 5) { |conn| write(conn, resource, "a bare 5") }
      assert_equal "a bare 5", committed_body(resource), "a guard without an owner compares no owner"
      assert_equal "7", committed_owner(resource), "an equal bare token keeps the recorded owner"
      assert_raises(ReissuedTokenError) { fences.guard(resource, 5, owner: 12) { flunk "ran" } }

      fences.guard(resource, 6) { |conn| write(conn, resource, "a bare 6") }
      assert_equal [stored_text(6), nil], [committed_mark_text(resource), committed_owner(resource)],
                   "a bare token that raises the mark records no owner"
      fences.guard(resource, 6, owner: 12) { |conn| write(conn, resource, "6 by 12") }
      assert_equal "6 by 12", committed_body(resource), "a mark without an owner admits an equal token from anyone"
    end

    def test_a_greater_token_from_another_owner_takes_over
      resource = unique_name("reissued")
      fences.guard(resource, 5, owner: 7) { |conn| write(conn, resource, "by 7") }
      fences.guard(resource, 8, owner: 12) { |conn| write(conn, resource, "by 12") }

      assert_equal [stored_text(8), "12"], [committed_mark_text(resource), committed_owner(resource)]
      assert_fenced(resource, 5, 8) { fences.guard(resource, 5, owner: 7) { flunk "ran" } }
      error = assert_raises(ReissuedTokenError) { fences.guard(resource, 8, owner: 7) { flunk "ran" } }
      assert_equal 12, error.recorded_owner
      assert_equal "by 12", committed_body(resource)
    end

    def test_a_refused_reissue_inside_a_transaction_leaves_it_usable
      resource = unique_name("reissued")
      fences.guard(resource, 5, owner: 7) { |conn| write(conn, resource, "by 7") }
      fences.guard(unique_name("outer"), 1) do
        assert_raises(ReissuedTokenError) { fences.guard(resource, 5, owner: 12) { flunk "ran" } }
        fences.guard(resource, 5, owner: 7) { |conn| write(conn, resource, "by 7 again, inside") }
      end

      assert_equal "by 7 again, inside", committed_body(resource)
    end

    def test_a_table_of_the_old_schema_gets_the_owner_column_from_setup_and_keeps_its_marks
      resource = unique_name("old")
      fences.highest(resource) # the fence's connection is open before the table changes under it
      replace_fence_table(OLD_SCHEMAS.fetch(engine))
      fence_admin_exec("INSERT INTO lease_machines_fences (resource, highest) VALUES " \
                       "(#{fence_admin_quote(resource)}, #{fence_admin_quote(stored_text(5))})")

      error = assert_raises(StoreError) { fences.guard(resource, 5, owner: 7) { flunk "ran" } }
      assert_includes error.message, "predates its lease_owner column: add it with fences.setup!"
      assert_equal 5, fences.highest(resource), "the mark is readable before the migration"

      assert_same fences, fences.setup!
      assert_same fences, fences.setup!, "setup! is idempotent once the column is there"
      assert_equal [stored_text(5), nil], [committed_mark_text(resource), committed_owner(resource)]
      fences.guard(resource, 5, owner: 7) { |conn| write(conn, resource, "5 by 7, after the migration") }
      assert_equal "7", committed_owner(resource), "an equal token records its owner on a mark without one"
      assert_raises(ReissuedTokenError) { fences.guard(resource, 5, owner: 12) { flunk "ran" } }
      assert_equal "5 by 7, after the migration", committed_body(resource)
    ensure
      fence_class.new(@admin).setup! unless engine == :sqlite # the table of the next tests
    end

    private

    def committed_owner(resource)
      sql = "SELECT lease_owner FROM lease_machines_fences WHERE resource = #{fence_admin_quote(resource)}"
      value = case engine
              when :sqlite then with_sqlite { |db| db.get_first_value(sql) }
              when :postgres then @admin.exec(sql.sub("lease_owner", "lease_owner::text")).values.dig(0, 0)
              else @admin.query(sql, as: :array, cast: false).to_a.dig(0, 0)
              end
      value&.to_s
    end

    def replace_fence_table(sql)
      fence_admin_exec("DROP TABLE lease_machines_fences")
      fence_admin_exec(sql)
    end

    def fence_admin_exec(sql)
      case engine
      when :sqlite then with_sqlite { |db| db.execute_batch(sql) }
      when :postgres then @admin.exec(sql)
      else @admin.query(sql)
      end
    end

    def fence_admin_quote(value)
      "'#{value.to_s.gsub("'", "''")}'"
    end
  end
end
