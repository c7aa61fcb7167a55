# frozen_string_literal: true

require_relative "doc_examples"

module LeaseMachines
  # Runs every ```ruby block of the documents in DOCUMENTS (README.md and
  # docs/API.md), so the documentation cannot drift (DocExamples: how a
  # block runs and what its annotations check).
  class ReadmeTest < DocExamples
    # Relative to ROOT. The other guides' blocks run in guides_test.rb
    # (STORES.md, FENCES.md, JOBS.md) and test/runtime/runtime_doc_test.rb.
    DOCUMENTS = %w[README.md docs/API.md].freeze

    def self.all_blocks
      DOCUMENTS.flat_map { |document| blocks(document) }
    end

    all_blocks.each do |block|
      next if block.marker == :"ill-typed" && RBS_RUNTIME_CHECK
      if method_defined?(block.test_name)
        raise "#{block.where(block.line)}: two blocks would share the test name #{block.test_name}"
      end

      define_method(block.test_name) do
        if block.marker == :norun
          assert Ripper.sexp(block.code.join("\n")), "#{block.where(block.line)}: the block does not parse"
        elsif block.durable?
          # As the store suites do: under GC.stress a block that opens a
          # durable store (forking children, which inherit the stress, or
          # renewing from the runtime's thread) takes many minutes; the
          # in-memory blocks stay stressed.
          without_gc_stress { run_block(block) }
        else
          run_block(block)
        end
      end
    end

    def test_the_documents_have_checked_examples
      blocks = without_gc_stress { self.class.all_blocks }

      assert_operator blocks.size, :>=, 10
      assert_operator blocks.sum(&:annotations), :>=, 60
      assert_operator blocks.count { |block| block.marker == :norun }, :<=, 3
      DOCUMENTS.each do |document|
        assert blocks.any? { |block| block.document == document && block.marker.nil? && block.annotations.positive? },
               "#{document} has no runnable, checked example"
      end
    end

    def test_the_readme_quick_start_shows_a_checked_example
      quick_start = without_gc_stress { self.class.blocks("README.md") }.select { |block| block.heading == "## Quick start" }

      assert quick_start.any? { |block| block.marker.nil? && block.annotations.positive? },
             "the README's quick start has no runnable example with a checked annotation"
    end

    def test_the_readme_starts_with_the_two_commands
      head = File.read(File.join(ROOT, "README.md"))[0, 1500]

      assert_includes head, "bin/demo"
      assert_includes head, "bin/test"
      assert_operator head.index("bin/demo"), :<, head.index("bin/test")
    end
  end
end
