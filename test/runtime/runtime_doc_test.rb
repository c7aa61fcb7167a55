# frozen_string_literal: true

require_relative "../docs/readme_test"

module LeaseMachines
  # Every ```ruby block of docs/RUNTIME.md, run and checked by the README
  # test's own runner (the same annotations: `# =>`, `# raises`).
  class RuntimeDocTest < ReadmeTest
    # Not the README's blocks again: only this document's.
    ReadmeTest.public_instance_methods(false).grep(/\Atest_/).each { |name| undef_method(name) }

    blocks("docs/RUNTIME.md").each do |block|
      next if block.marker == :"ill-typed" && RBS_RUNTIME_CHECK

      define_method(:"test_runtime_md_block_at_line_#{block.line}") { run_block(block) }
    end

    def test_the_document_has_checked_examples
      blocks = self.class.blocks("docs/RUNTIME.md")
      assert_operator blocks.size, :>=, 5
      assert_operator blocks.sum(&:annotations), :>=, 15
    end
  end
end
