/**
 * Shell completion, the way cobra-based tools (kubectl, helm) do it: the
 * shell script is small and asks the command itself what may come next —
 * `workloadspread __complete <words so far> <word being typed>` prints one
 * candidate per line, then `:<directive>` (cobra's bit set: 4 = no file
 * completion, 16 = directories only, 0 = let the shell complete file names).
 * kubectl (1.26+) asks a plugin the same question through an executable
 * named `kubectl_complete-<plugin>` on PATH, which the package installs
 * (bin/kubectl_complete-workloadspread.js), so `kubectl workloadspread <TAB>`
 * completes too.
 *
 * Candidates come from the commander definition (main.ts): sub-commands,
 * their flags, the choices of flags and arguments (`-o json|yaml|…`,
 * `manifests install|crd`); a value named `<file>` or `<path>` lets the shell
 * complete file names, `<dir>` directories. Nothing is read from a cluster.
 * Pure apart from the commander objects it reads.
 */
import type { Argument, Command, Option } from 'commander';

/** cobra's ShellCompDirective values. */
export const DIRECTIVE = { default: 0, noSpace: 2, noFileComp: 4, filterDirs: 16 } as const;

export interface Completions {
  candidates: string[];
  directive: number;
}

const FILE_VALUES = new Set(['file', 'file...', 'path']);
const DIR_VALUES = new Set(['dir']);

/** The value placeholder of an option (`<file...>` → `file...`), or undefined for a flag without a value. */
function placeholder(option: Option): string | undefined {
  const m = /[<[]([^>\]]+)[>\]]/.exec(option.flags);
  return m?.[1];
}

function takesValue(option: Option): boolean {
  // `[bool]` values are optional: the next word is a value only when written as --flag=value.
  return option.required === true;
}

function valueCompletions(choices: readonly string[] | undefined, name: string | undefined, prefix: string): Completions {
  if (choices !== undefined && choices.length > 0) return { candidates: choices.filter((c) => c.startsWith(prefix)), directive: DIRECTIVE.noFileComp };
  if (name !== undefined && FILE_VALUES.has(name)) return { candidates: [], directive: DIRECTIVE.default };
  if (name !== undefined && DIR_VALUES.has(name)) return { candidates: [], directive: DIRECTIVE.filterDirs };
  return { candidates: [], directive: DIRECTIVE.noFileComp };
}

function findOption(command: Command, word: string): Option | undefined {
  const name = word.includes('=') ? word.slice(0, word.indexOf('=')) : word;
  return command.options.find((o) => o.long === name || o.short === name);
}

function visibleCommands(command: Command): Command[] {
  return command
    .createHelp()
    .visibleCommands(command)
    .filter((c) => c.name() !== 'help');
}

/** What may follow `words` (the last word is the one being completed; empty after a space). */
export function completeWords(program: Command, words: readonly string[]): Completions {
  const done = words.slice(0, -1);
  const current = words.at(-1) ?? '';
  let command = program;
  let pending: Option | undefined;
  let positional = 0;
  let afterDashes = false;
  for (const word of done) {
    if (pending !== undefined) {
      pending = undefined;
      continue;
    }
    if (!afterDashes && word === '--') {
      afterDashes = true;
      continue;
    }
    if (!afterDashes && word.startsWith('-') && word !== '-') {
      const option = findOption(command, word);
      if (option !== undefined && takesValue(option) && !word.includes('=')) pending = option;
      continue;
    }
    const sub = command === program ? visibleCommands(command).find((c) => c.name() === word || c.aliases().includes(word)) : undefined;
    if (sub !== undefined) {
      command = sub;
      continue;
    }
    positional++;
  }

  if (pending !== undefined) return valueCompletions(pending.argChoices, placeholder(pending), current);
  if (!afterDashes && current.startsWith('--') && current.includes('=')) {
    const option = findOption(command, current);
    const prefix = current.slice(0, current.indexOf('=') + 1);
    if (option === undefined) return { candidates: [], directive: DIRECTIVE.noFileComp };
    const values = valueCompletions(option.argChoices, placeholder(option), current.slice(prefix.length));
    return { candidates: values.candidates.map((v) => prefix + v), directive: values.directive };
  }
  if (!afterDashes && current.startsWith('-')) {
    const flags = command
      .createHelp()
      .visibleOptions(command)
      .flatMap((o) => [o.long, ...(current.startsWith('--') ? [] : [o.short])])
      .filter((f): f is string => f !== undefined && f.startsWith(current));
    if (command === program) flags.push(...['--help', '--version'].filter((f) => f.startsWith(current) && !flags.includes(f)));
    return { candidates: [...new Set(flags)], directive: DIRECTIVE.noFileComp };
  }
  if (command === program) {
    return { candidates: visibleCommands(program).map((c) => c.name()).filter((n) => n.startsWith(current)), directive: DIRECTIVE.noFileComp };
  }
  const args: readonly Argument[] = command.registeredArguments;
  const arg = args[Math.min(positional, args.length - 1)];
  if (arg === undefined || (positional >= args.length && !arg.variadic)) return { candidates: [], directive: DIRECTIVE.noFileComp };
  return valueCompletions(arg.argChoices, arg.name(), current);
}

/** cobra's output format: one candidate per line, then `:<directive>`. */
export function formatCompletions(c: Completions): string {
  return `${c.candidates.map((x) => `${x}\n`).join('')}:${c.directive}\n`;
}

/** The executable the script completes: `workloadspread`, or `kubectl-workloadspread` for the plugin's name. */
function executable(programName: string): string {
  return programName.replace(/ /g, '-');
}

function identifier(name: string): string {
  return name.replace(/[^A-Za-z0-9_]/g, '_');
}

function bashScript(name: string): string {
  const fn = `__${identifier(name)}_complete`;
  return `# bash completion for ${name}
# Load it in this shell:      source <(${name} completion bash)
# Or for every new shell:     ${name} completion bash > ~/.local/share/bash-completion/completions/${name}
${fn}() {
    local cur="\${COMP_WORDS[COMP_CWORD]}"
    local out directive
    out=$("\${COMP_WORDS[0]}" __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null) || return 0
    directive="\${out##*:}"
    out="\${out%:*}"
    COMPREPLY=()
    local line
    while IFS='' read -r line; do
        [[ -n "$line" ]] && COMPREPLY+=("$line")
    done <<< "$out"
    if (( \${#COMPREPLY[@]} == 0 )); then
        if (( directive & 16 )); then
            compopt -o dirnames 2>/dev/null
            COMPREPLY=($(compgen -d -- "$cur"))
        elif (( (directive & 4) == 0 )); then
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
        fi
    fi
    return 0
}
complete -F ${fn} ${name}
`;
}

function zshScript(name: string): string {
  const fn = `_${identifier(name)}`;
  return `#compdef ${name}
# zsh completion for ${name}
# Load it in this shell:      source <(${name} completion zsh)
# Or for every new shell:     ${name} completion zsh > "\${fpath[1]}/_${name}"
${fn}() {
  local out directive
  local -a lines
  out=$("\${words[1]}" __complete "\${(@)words[2,CURRENT]}" 2>/dev/null) || return 1
  lines=("\${(@f)out}")
  directive="\${lines[-1]#:}"
  lines=("\${(@)lines[1,-2]}")
  lines=("\${(@)lines:#}")
  if (( \${#lines} )); then
    compadd -Q -- "\${lines[@]}"
  elif (( directive & 16 )); then
    _files -/
  elif (( (directive & 4) == 0 )); then
    _files
  fi
}
if [[ "\${funcstack[1]}" = "${fn}" ]]; then
  ${fn} "$@"
else
  compdef ${fn} ${name}
fi
`;
}

/** The script `completion bash|zsh` prints for the program called `programName`. */
export function completionScript(shell: 'bash' | 'zsh', programName: string): string {
  const name = executable(programName);
  return shell === 'bash' ? bashScript(name) : zshScript(name);
}
