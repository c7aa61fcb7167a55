# frozen_string_literal: true

require "test_helper"

module LeaseMachines
  # docs/ARCHITECTURE.md is the one map of lib/: a file under lib/ that the
  # map does not name fails this test, so a new file is placed on the map in
  # the commit that adds it.
  #
  # The rule, on the table under "## The Ruby library":
  #
  # - The first cell of a row names its folders (`stores/`) and files
  #   (`authority.rb`) in backticks, relative to lib/lease_machines/, or
  #   relative to the repository when they start with `lib/`.
  # - The rest of the row names files inside the row's folders, by their path
  #   relative to the folder (`store.rb`, `postgres/fast_path.rb`). A folder
  #   in backticks followed at once by parentheses lists its own files:
  #   `postgres/` (`fast_path.rb`, `listener.rb`) names postgres/fast_path.rb
  #   and postgres/listener.rb. Listings nest.
  # - A file is on the map when a first cell names it, or when a row's folder
  #   joined to a name of that row is its path.
  #
  # Not on the map: the compiled extension (lib/lease_machines_native/), a
  # build product that git ignores.
  class ArchitectureMapTest < Minitest::Test
    ROOT = File.expand_path("../..", __dir__)
    MAP = "docs/ARCHITECTURE.md"
    SECTION = "## The Ruby library"
    BUILT = %r{\Alib/lease_machines_native/}
    # A name in backticks, or a parenthesis outside backticks.
    TOKEN = /`([^`]+)`|([()])/

    Row = Struct.new(:line, :folders, :files, :names)

    # The lib files, relative to ROOT.
    def self.lib_files(root = ROOT)
      Dir.glob("lib/**/*", base: root).select { |path| File.file?(File.join(root, path)) }.grep_v(BUILT).sort
    end

    # The rows of the section's table.
    def self.rows(text)
      lines = text.lines(chomp: true)
      start = lines.index { |line| line.start_with?(SECTION) } or raise "#{MAP}: no #{SECTION.inspect} section"
      finish = ((start + 1)...lines.size).find { |at| lines[at].start_with?("## ") } || lines.size
      ((start + 1)...finish).filter_map do |at|
        line = lines[at]
        next unless line.start_with?("|") && !line.match?(/\A\|[-\s|]+\|\z/)

        first, *rest = line.split(/(?<!\\)\|/).drop(1)
        named = first.scan(/`([^`]+)`/).flatten.map { |name| from_lib(name) }
        Row.new(at + 1, named.select { |name| name.end_with?("/") }, named.reject { |name| name.end_with?("/") },
                listed(rest.join("|")))
      end
    end

    # A first cell's name as a path relative to ROOT.
    def self.from_lib(name) = name.start_with?("lib/") ? name : "lib/lease_machines/#{name}"

    # Every name of a description, each joined to the folders whose listing
    # it stands in.
    def self.listed(text)
      names = []
      stack = []
      folder = nil
      text.scan(TOKEN) do |name, paren|
        case paren
        when "(" then stack.push(folder)
        when ")" then stack.pop
        else
          names << (stack.compact.join + name)
          # A folder opens a listing only when the parenthesis follows it at once.
          folder = name.end_with?("/") && Regexp.last_match.post_match.match?(/\A\s*\(/) ? name : nil
          next
        end
        folder = nil
      end
      names
    end

    # The lib files that no row names.
    def self.unmapped(files, rows)
      mapped = rows.flat_map { |row| row.files + row.folders.product(row.names).map(&:join) }
      files - mapped
    end

    def map_text = File.read(File.join(ROOT, MAP))

    def test_every_lib_file_is_on_the_map
      unmapped = self.class.unmapped(self.class.lib_files, self.class.rows(map_text))

      assert_empty unmapped, "#{MAP}, #{SECTION.inspect}: these lib files are not on the map; name each in the row " \
                             "of its folder (see #{File.basename(__FILE__)} for the rule)"
    end

    def test_the_map_names_no_file_that_does_not_exist
      rows = self.class.rows(map_text)
      stale = rows.flat_map(&:files).reject { |path| File.file?(File.join(ROOT, path)) }
      stale += rows.flat_map(&:folders).reject { |path| File.directory?(File.join(ROOT, path)) }

      assert_empty stale, "#{MAP}: the map names what lib/ does not have"
    end

    def test_the_rule_reads_listings_and_first_cells
      rows = self.class.rows(<<~MARKDOWN)
        #{SECTION}

        | folder / file | shapes |
        |---|---|
        | `a.rb`, `b/` | `c.rb`, `d/` (`e.rb`, `f/` (`g.rb`)), `h.rb` (not a listing: `i.rb`) |
        | `lib/top.rb` | |

        ## Next
      MARKDOWN
      files = %w[a.rb b/c.rb b/d/e.rb b/d/f/g.rb b/h.rb b/i.rb e.rb b/g.rb].map { |path| "lib/lease_machines/#{path}" }

      assert_equal %w[lib/lease_machines/e.rb lib/lease_machines/b/g.rb],
                   self.class.unmapped(files + ["lib/top.rb"], rows)
    end
  end
end
